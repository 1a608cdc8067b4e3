//! Device linking: LTOIR made by libNVVM, CUDA C++ linked in by nvJitLink, and the crate metadata
//! that names the CUDA C++ sources. The device compiler (which makes and links LTOIR), `cargo
//! oxide` (which reads the metadata) and the runtime (which may link LTOIR when a program loads)
//! read these facts from here.

use std::path::Path;

use crate::arch::Arch;
use crate::toolkit::CudaRelease;

/// `!nvvmir.version` of the LTOIR we make: libNVVM 13 reads NVVM IR 2.0 (debug info 3.2) and
/// rejects a module without this metadata.
pub const NVVM_IR_VERSION: [u32; 4] = [2, 0, 3, 2];

/// The data layout libNVVM requires of its input. LLVM's own NVPTX layout (what `llc` wants)
/// describes the same sizes and alignments in fewer words, but nvJitLink refuses to generate code
/// for a module whose layout string differs from this one.
pub const NVVM_DATALAYOUT: &str = "e-p:64:64:64-p6:32:32:32-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-\
i128:128:128-f32:32:32-f64:64:64-f128:128:128-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64-a:8:8";

/// libNVVM's option for reading IR of the LLVM version it is built on: our modules come from
/// LLVM 22, which the older NVVM dialect that libNVVM 13 assumes for sm_75..sm_90 cannot parse.
/// nvJitLink needs it too when it links such LTOIR, so LTOIR from us needs nvJitLink 13.5 or later.
pub const NVVM_LATEST: &str = "-nvvm-latest";

/// Whether nvJitLink of CUDA release `linker` can link LTOIR made by a compiler of release
/// `producer`: NVIDIA keeps LTOIR compatible within a major release, for a linker of the producer's
/// release or newer (an older one rejects it: nvJitLink 13.0 fails on LTOIR of libNVVM 13.5).
pub fn nvjitlink_can_link(linker: CudaRelease, producer: CudaRelease) -> bool {
    linker.major == producer.major && linker >= producer
}

/// The `!llvm.module.flags` entry for the debug metadata version in the IR we give libNVVM.
/// LLVM marks it "warning on conflict" (behaviour 2), nvcc's LTOIR marks it "error on conflict"
/// (1), and nvJitLink refuses to link two modules whose flag behaviours differ ("linking module
/// flags 'Debug Info Version': IDs have conflicting behaviors"): ours is written as nvcc's.
pub const NVVM_DEBUG_INFO_VERSION_FLAG: &str = "!{i32 1, !\"Debug Info Version\", i32 3}";

/// How much debug information LTOIR and its link keep (the device build's debug level, which
/// lives in the build-only `config`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkDebug {
    /// No option: the code keeps what its modules' metadata describe (the loader's link).
    None,
    /// Source lines (nvJitLink's `-lineinfo`); libNVVM takes them from the module's metadata.
    Lines,
    /// Everything a debugger needs, unoptimised (libNVVM's `-g -opt=0`, nvJitLink's `-g`).
    Full,
}

/// The libNVVM options that compile the device module to LTOIR for `arch`.
pub fn nvvm_ltoir_options(arch: Arch, fmad: bool, debug: LinkDebug) -> Vec<String> {
    let mut options =
        vec![format!("-arch={}", arch.compute_name()), "-gen-lto".into(), NVVM_LATEST.into(), fma_option(fmad)];
    if debug == LinkDebug::Full {
        options.extend(["-g".into(), "-opt=0".into()]);
    }
    options
}

/// nvcc's `-arch` for LTOIR of `arch`: `lto_90`, `lto_90a`.
pub fn lto_name(arch: Arch) -> String {
    format!("lto_{}", arch.compute_name().trim_start_matches("compute_"))
}

/// What an nvJitLink run produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkOutput {
    Cubin,
    /// PTX after link-time optimisation (for drivers that JIT it on GPUs newer than the build's).
    Ptx,
}

/// The nvJitLink options that link-time-optimise LTOIR (and whatever else is linked with it)
/// into code for exactly `arch`.
pub fn nvjitlink_options(arch: Arch, fmad: bool, output: LinkOutput, debug: LinkDebug) -> Vec<String> {
    let mut options = vec![format!("-arch={arch}"), "-lto".into(), NVVM_LATEST.into(), fma_option(fmad)];
    match debug {
        LinkDebug::None => {}
        LinkDebug::Lines => options.push("-lineinfo".into()),
        LinkDebug::Full => options.push("-g".into()),
    }
    if output == LinkOutput::Ptx {
        options.push("-ptx".into());
    }
    options
}

/// `-fma=1` lets libNVVM and nvJitLink contract `a*b+c` (cargo oxide's default); `--no-fmad`
/// gives `-fma=0`.
fn fma_option(fmad: bool) -> String {
    format!("-fma={}", u8::from(fmad))
}

/// The table of `[package.metadata]` in a crate's `Cargo.toml` that cuda-oxide reads.
pub const METADATA_TABLE: &str = "cuda-oxide";
/// Key of [`METADATA_TABLE`]: the CUDA C++ sources (and prebuilt device code) linked into the
/// crate's device code, paths relative to `Cargo.toml`.
pub const CUDA_SOURCES_KEY: &str = "cuda-sources";
/// Key of [`METADATA_TABLE`]: extra `nvcc` options for those sources (`-I`, `-D`, `-std=`…).
pub const NVCC_FLAGS_KEY: &str = "nvcc-flags";

/// What a file named in [`CUDA_SOURCES_KEY`] is, by its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkInput {
    /// `.cu`: compiled by `nvcc -dlto` to LTOIR for each arch.
    CudaSource,
    /// `.ltoir`: LTOIR made elsewhere (`nvcc -dlto -ltoir`); must match the build's archs.
    Ltoir,
    /// `.cubin`: a relocatable cubin (`nvcc -dc -cubin`, `ptxas -c`).
    Cubin,
    /// `.ptx`.
    Ptx,
    /// `.fatbin`.
    Fatbin,
    /// `.o`: a host object with embedded device code (`nvcc -dc`, `nvcc -dc -dlto`).
    Object,
    /// `.a`: a library of such objects.
    Library,
}

impl LinkInput {
    /// Every kind, with its extension.
    pub const ALL: [(LinkInput, &'static str); 7] = [
        (LinkInput::CudaSource, "cu"),
        (LinkInput::Ltoir, "ltoir"),
        (LinkInput::Cubin, "cubin"),
        (LinkInput::Ptx, "ptx"),
        (LinkInput::Fatbin, "fatbin"),
        (LinkInput::Object, "o"),
        (LinkInput::Library, "a"),
    ];

    /// The kind of `path`, from its extension.
    pub fn of(path: &Path) -> Option<LinkInput> {
        let ext = path.extension()?.to_str()?;
        LinkInput::ALL.iter().find(|(_, e)| *e == ext).map(|(k, _)| *k)
    }

    /// The extensions `cuda-sources` accepts, for error messages.
    pub fn extensions() -> String {
        LinkInput::ALL.iter().map(|(_, e)| format!(".{e}")).collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_per_arch() {
        let sm90 = Arch::parse("sm_90a").unwrap();
        assert_eq!(
            nvvm_ltoir_options(sm90, true, LinkDebug::Lines),
            ["-arch=compute_90a", "-gen-lto", "-nvvm-latest", "-fma=1"]
        );
        assert!(nvvm_ltoir_options(sm90, true, LinkDebug::Full).ends_with(&["-g".into(), "-opt=0".into()]));
        assert_eq!(
            nvjitlink_options(sm90, false, LinkOutput::Cubin, LinkDebug::None),
            ["-arch=sm_90a", "-lto", "-nvvm-latest", "-fma=0"]
        );
        assert_eq!(
            nvjitlink_options(sm90, true, LinkOutput::Ptx, LinkDebug::Lines)[4..],
            ["-lineinfo".to_string(), "-ptx".into()]
        );
        assert_eq!(nvjitlink_options(sm90, true, LinkOutput::Cubin, LinkDebug::Full)[4..], ["-g".to_string()]);
        assert_eq!(lto_name(sm90), "lto_90a");
        assert_eq!(lto_name(Arch::parse("sm_80").unwrap()), "lto_80");
    }

    #[test]
    fn nvjitlink_links_ltoir_of_its_release_or_older_in_its_major() {
        let r = CudaRelease::new;
        assert!(nvjitlink_can_link(r(13, 5), r(13, 5)));
        assert!(nvjitlink_can_link(r(13, 6), r(13, 5)));
        assert!(!nvjitlink_can_link(r(13, 0), r(13, 5)));
        assert!(!nvjitlink_can_link(r(14, 0), r(13, 5)));
        assert!(!nvjitlink_can_link(r(12, 9), r(13, 0)));
    }

    #[test]
    fn inputs_by_extension() {
        assert_eq!(LinkInput::of(Path::new("src/a.cu")), Some(LinkInput::CudaSource));
        assert_eq!(LinkInput::of(Path::new("lib/libx.a")), Some(LinkInput::Library));
        assert_eq!(LinkInput::of(Path::new("x.cpp")), None);
        assert!(LinkInput::extensions().starts_with(".cu, .ltoir"));
    }

    #[test]
    fn datalayout_is_one_string() {
        assert!(!NVVM_DATALAYOUT.contains(' ') && NVVM_DATALAYOUT.ends_with("a:8:8"));
    }
}
