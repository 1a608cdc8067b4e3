//! Finds the external tools a device build needs: the pinned toolchain's LLVM tools and the CUDA tools.
//!
//! LLVM (`llc`, `opt`, `llvm-link`) comes from the `llvm-tools` component of the pinned nightly, the
//! same LLVM rustc uses. The CUDA tools come from `CUDA_HOME`/`CUDA_PATH`, the `ptxas` on `PATH` or
//! `/usr/local/cuda` when present, else from the managed install that `cargo oxide setup` makes
//! under `${CUDA_OXIDE_HOME:-$HOME/.cuda-oxide}`.
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use oxide_contract::config::{Emit, ToolPaths};
use oxide_contract::toolkit::{COMPILER_BANNER, CudaRelease};

/// The nightly the driver is built against; `rust-toolchain.toml` at the checkout root says the same.
pub const PINNED_TOOLCHAIN: &str = "nightly-2026-05-20";
/// Components of the pinned toolchain that cuda-oxide needs.
pub const COMPONENTS: [&str; 3] = ["rust-src", "rustc-dev", "llvm-tools"];
/// Where the managed CUDA install lives: oxide-contract owns it, for the runtime's nvJitLink
/// search reads it too.
pub use oxide_contract::toolkit::{CUDA_VERSION, managed_cuda_dir, managed_cuda_root, oxide_home};
/// The wheels `cargo oxide setup` installs (all at [`CUDA_VERSION`]).
/// `cuobjdump` lists what a built cubin holds (the interop tests check linked code with it).
pub const CUDA_WHEELS: [&str; 6] = [
    "nvidia-cuda-nvcc",
    "nvidia-nvvm",
    "nvidia-nvjitlink",
    "nvidia-nvfatbin",
    "nvidia-cuda-nvdisasm",
    "nvidia-cuda-cuobjdump",
];
/// CCCL (CUB, Thrust, libcu++) for the CUDA C++ sources a crate names: CUDA 13's nvcc wheel has no
/// CCCL headers, and NVIDIA publishes no `nvidia-cuda-cccl` wheel at [`CUDA_VERSION`]. CCCL is
/// header-only and supports a range of toolkits; this wheel is CCCL 3.5.0, which nvcc 13.5
/// compiles (CUB block/warp reductions and scans: `tests/gpu/interop-cub`).
pub const CCCL_WHEEL: &str = "nvidia-cuda-cccl";
pub const CCCL_VERSION: &str = "13.3.5.0.6";
/// sha256 of the wheel's two builds (x86_64, aarch64): pip installs no other file.
pub const CCCL_SHA256: [&str; 2] = [
    "d5230098fa2df5021e1a00c0c4eee41797671a91119d31e892463e5ccf3ee326",
    "6f30b8076b3e69951c459c94ae190bde51924b320076ebaec376d36848b4c76e",
];

/// Where `cargo oxide setup` installs CCCL: a directory of its own, beside the CUDA tools, so the
/// CUDA install (and its marker) stays as it is.
pub fn managed_cccl_dir() -> PathBuf {
    oxide_home().join(format!("cccl-{CCCL_VERSION}"))
}

/// The include directory of the managed CCCL (`cub/`, `thrust/`, `cuda/std/`).
pub fn managed_cccl_include() -> PathBuf {
    managed_cccl_dir().join("nvidia/cu13/include/cccl")
}

/// Where the CCCL headers that `nvcc` compiles against are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cccl {
    /// nvcc's own toolkit has them: its `nvcc.profile` adds `include/cccl` (CUDA 13), or they are
    /// in `include/` (CUDA 12).
    Toolkit(PathBuf),
    /// The copy `cargo oxide setup` installs, which nvcc must be told about (`-isystem`).
    Managed(PathBuf),
}

/// The CCCL of `nvcc`: its toolkit's, else the managed one; `None` when neither is there.
pub fn cccl_for(nvcc: &Path) -> Option<Cccl> {
    let has_cub = |include: &Path| include.join("cub/cub.cuh").is_file();
    let root = nvcc.parent()?.parent()?;
    if let Some(own) = [root.join("include/cccl"), root.join("include")].into_iter().find(|d| has_cub(d)) {
        return Some(Cccl::Toolkit(own));
    }
    Some(managed_cccl_include()).filter(|d| has_cub(d)).map(Cccl::Managed)
}

/// The CCCL include directory to give `nvcc` (`ToolPaths::cccl_include`).
pub fn cccl_include_for(nvcc: &Path) -> Option<PathBuf> {
    match cccl_for(nvcc)? {
        Cccl::Managed(dir) => Some(dir),
        Cccl::Toolkit(_) => None,
    }
}

/// The fix for anything `cargo oxide setup` installs.
pub const SETUP_FIX: &str = "run `cargo oxide setup`";

/// The pinned Rust toolchain, found through rustup.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Toolchain {
    pub sysroot: PathBuf,
    /// Host triple, e.g. `x86_64-unknown-linux-gnu`.
    pub host: String,
    /// `rustc -V` output.
    pub version: String,
}

/// A [`Toolchain`] as remembered by [`Toolchain::find`], with the stamp of its `rustc`.
#[derive(serde::Serialize, serde::Deserialize)]
struct CachedToolchain {
    toolchain: Toolchain,
    rustc: crate::cache::Stamp,
}

impl Toolchain {
    /// Finds [`PINNED_TOOLCHAIN`], as remembered from an earlier run while its `rustc` is the
    /// same file (asking rustup costs two process starts per build); the error says how to
    /// install it.
    pub fn find() -> Result<Toolchain> {
        let path = oxide_home().join("cache").join(format!("toolchain-{PINNED_TOOLCHAIN}.json"));
        if let Some(cached) = crate::cache::read::<CachedToolchain>(&path)
            && crate::cache::Stamp::of(&cached.toolchain.rustc()) == Some(cached.rustc)
        {
            return Ok(cached.toolchain);
        }
        let toolchain = Toolchain::find_with_rustup()?;
        if let Some(rustc) = crate::cache::Stamp::of(&toolchain.rustc()) {
            crate::cache::write(&path, &CachedToolchain { toolchain: toolchain.clone(), rustc });
        }
        Ok(toolchain)
    }

    /// Finds [`PINNED_TOOLCHAIN`] by asking rustup (what `setup` and `doctor` use).
    pub fn find_with_rustup() -> Result<Toolchain> {
        if which::which("rustup").is_err() {
            bail!("`rustup` not found on PATH; install rustup (https://rustup.rs), then {SETUP_FIX}");
        }
        let out = Command::new("rustup")
            .args(["run", PINNED_TOOLCHAIN, "rustc", "--print", "sysroot"])
            .env("RUSTUP_AUTO_INSTALL", "0")
            .output()
            .context("could not run `rustup`")?;
        if !out.status.success() {
            bail!("the pinned Rust toolchain {PINNED_TOOLCHAIN} is not installed; {SETUP_FIX}");
        }
        let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let rustc = sysroot.join("bin/rustc");
        let out =
            Command::new(&rustc).arg("-vV").output().with_context(|| format!("could not run {}", rustc.display()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let version = text.lines().next().unwrap_or_default().to_string();
        let host = text
            .lines()
            .find_map(|l| l.strip_prefix("host: "))
            .map(str::to_string)
            .with_context(|| format!("`{} -vV` printed no host triple", rustc.display()))?;
        Ok(Toolchain { sysroot, host, version })
    }

    /// The toolchain's full rustup name (`nightly-2026-05-20-x86_64-unknown-linux-gnu`), for
    /// `RUSTUP_TOOLCHAIN`: the short name works for rustup too, but cargo finds the toolchain's
    /// `rustc` by this one to key its rustc-info cache, and runs `rustc -vV` on every build without it.
    pub fn rustup_name(&self) -> String {
        self.sysroot.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| PINNED_TOOLCHAIN.into())
    }

    pub fn rustc(&self) -> PathBuf {
        self.sysroot.join("bin/rustc")
    }

    pub fn cargo(&self) -> PathBuf {
        self.sysroot.join("bin/cargo")
    }

    /// Where the `llvm-tools` component puts `llc`, `opt` and `llvm-link`.
    pub fn llvm_bin_dir(&self) -> PathBuf {
        self.sysroot.join("lib/rustlib").join(&self.host).join("bin")
    }

    /// Whether a component's files are present (checked on disk, so it needs no rustup call).
    pub fn has_component(&self, component: &str) -> bool {
        let rustlib = self.sysroot.join("lib/rustlib");
        match component {
            "rust-src" => rustlib.join("src/rust/library/core").is_dir(),
            "llvm-tools" => self.llvm_bin_dir().join("llc").is_file(),
            "rustc-dev" => has_file_starting_with(&rustlib.join(&self.host).join("lib"), "librustc_middle-"),
            _ => false,
        }
    }

    /// The components of [`COMPONENTS`] that are missing.
    pub fn missing_components(&self) -> Vec<&'static str> {
        COMPONENTS.into_iter().filter(|c| !self.has_component(c)).collect()
    }
}

fn has_file_starting_with(dir: &Path, prefix: &str) -> bool {
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().any(|e| e.file_name().to_string_lossy().starts_with(prefix)))
        .unwrap_or(false)
}

/// The CUDA tools found on this machine.
#[derive(Clone, Debug, Default)]
pub struct CudaTools {
    pub ptxas: Option<PathBuf>,
    pub fatbinary: Option<PathBuf>,
    pub libnvvm: Option<PathBuf>,
    pub libdevice: Option<PathBuf>,
    pub nvjitlink: Option<PathBuf>,
    pub nvcc: Option<PathBuf>,
}

const PTXAS: &[&str] = &["bin/ptxas"];
const FATBINARY: &[&str] = &["bin/fatbinary"];
const LIBNVVM: &[&str] = &["nvvm/lib64/libnvvm.so", "nvvm/lib64/libnvvm.so.4", "lib/libnvvm.so.4", "lib64/libnvvm.so"];
const LIBDEVICE: &[&str] = &["nvvm/libdevice/libdevice.10.bc"];
const NVJITLINK: &[&str] = &["lib64/libnvJitLink.so", "lib/libnvJitLink.so.13", "lib64/libnvJitLink.so.13"];
const NVCC: &[&str] = &["bin/nvcc"];

impl CudaTools {
    /// Looks in every CUDA root ([`cuda_roots`]), taking each tool from the first that has it.
    pub fn find() -> CudaTools {
        CudaTools::find_in(&cuda_roots())
    }

    /// Looks in `roots` only, taking each tool from the first that has it.
    pub fn find_in(roots: &[PathBuf]) -> CudaTools {
        let first = |rels: &[&str]| {
            roots.iter().flat_map(|root| rels.iter().map(move |rel| root.join(rel))).find(|p| p.is_file())
        };
        CudaTools {
            ptxas: first(PTXAS),
            fatbinary: first(FATBINARY),
            libnvvm: first(LIBNVVM),
            libdevice: first(LIBDEVICE),
            nvjitlink: first(NVJITLINK),
            nvcc: first(NVCC),
        }
    }

    /// `true` when every tool was found.
    pub fn complete(&self) -> bool {
        self.ptxas.is_some() && self.fatbinary.is_some() && self.libnvvm.is_some() && self.libdevice.is_some()
    }
}

/// `nvdisasm` (for `cargo oxide inspect --sass`): on `PATH` or in a CUDA root's `bin/`.
pub fn nvdisasm() -> Option<PathBuf> {
    which::which("nvdisasm")
        .ok()
        .or_else(|| cuda_roots().into_iter().map(|r| r.join("bin/nvdisasm")).find(|p| p.is_file()))
}

/// CUDA installations to look in, in order: `CUDA_HOME`, `CUDA_PATH`, the one whose `ptxas` is on
/// `PATH`, `/usr/local/cuda`, and last the managed install.
pub fn cuda_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(dir) = std::env::var_os(var).filter(|d| !d.is_empty()) {
            roots.push(PathBuf::from(dir));
        }
    }
    if let Some(root) = which::which("ptxas").ok().and_then(|p| p.parent()?.parent().map(Path::to_path_buf)) {
        roots.push(root);
    }
    roots.push(PathBuf::from("/usr/local/cuda"));
    roots.push(managed_cuda_root());
    roots.dedup();
    roots
}

/// Everything a device build runs, resolved to absolute paths.
#[derive(Clone, Debug)]
pub struct Tools {
    pub toolchain: Toolchain,
    pub cuda: CudaTools,
}

impl Tools {
    /// Finds the toolchain and the CUDA tools, without checking that they are complete.
    pub fn find() -> Result<Tools> {
        Ok(Tools { toolchain: Toolchain::find()?, cuda: CudaTools::find() })
    }

    /// Checks that every tool a build producing `emits` runs is present; the error names the
    /// first missing tool and the fix.
    pub fn require(&self, emits: &[Emit]) -> Result<ToolPaths> {
        let missing = self.toolchain.missing_components();
        if !missing.is_empty() {
            bail!("the {PINNED_TOOLCHAIN} toolchain lacks the component(s) {}; {SETUP_FIX}", missing.join(", "));
        }
        let bin = self.toolchain.llvm_bin_dir();
        for tool in ["llc", "opt", "llvm-link"] {
            if !bin.join(tool).is_file() {
                bail!("`{tool}` not found in {} (component llvm-tools); {SETUP_FIX}", bin.display());
            }
        }
        let where_ = "looked in CUDA_HOME, PATH, /usr/local/cuda and the managed install";
        let need = |found: &Option<PathBuf>, what: &str| -> Result<()> {
            match found {
                Some(_) => Ok(()),
                None => bail!("{what} not found ({where_}); {SETUP_FIX}"),
            }
        };
        need(&self.cuda.ptxas, "`ptxas`")?;
        if emits.contains(&Emit::Fatbin) {
            need(&self.cuda.fatbinary, "`fatbinary`")?;
        }
        if emits.contains(&Emit::Ltoir) {
            need(&self.cuda.libnvvm, "libNVVM (libnvvm.so)")?;
        }
        Ok(self.tool_paths())
    }

    /// Checks the tools that link CUDA C++ sources into device code (libNVVM, nvcc, nvJitLink).
    pub fn require_linking(&self) -> Result<()> {
        let where_ = "looked in CUDA_HOME, PATH, /usr/local/cuda and the managed install";
        for (found, what) in [
            (&self.cuda.libnvvm, "libNVVM (libnvvm.so)"),
            (&self.cuda.nvcc, "`nvcc`"),
            (&self.cuda.nvjitlink, "nvJitLink (libnvJitLink.so)"),
        ] {
            if found.is_none() {
                bail!(
                    "{what} is needed to link the CUDA C++ sources named in Cargo.toml but was not found ({where_}); {SETUP_FIX}"
                );
            }
        }
        Ok(())
    }

    /// The paths as the driver receives them (missing CUDA tools as `None`).
    pub fn tool_paths(&self) -> ToolPaths {
        let bin = self.toolchain.llvm_bin_dir();
        ToolPaths {
            llc: bin.join("llc"),
            opt: bin.join("opt"),
            llvm_link: bin.join("llvm-link"),
            ptxas: self.cuda.ptxas.clone(),
            fatbinary: self.cuda.fatbinary.clone(),
            libdevice: self.cuda.libdevice.clone(),
            libnvvm: self.cuda.libnvvm.clone(),
            nvjitlink: self.cuda.nvjitlink.clone(),
            nvcc: self.cuda.nvcc.clone(),
            cccl_include: self.cuda.nvcc.as_deref().and_then(cccl_include_for),
            // Read (from large files) only by builds that make LTOIR: see `build::device_config`.
            libnvvm_release: None,
            nvcc_release: None,
            versions: [("llc", Some(bin.join("llc"))), ("ptxas", self.cuda.ptxas.clone())]
                .into_iter()
                .filter_map(|(name, path)| Some((name.to_string(), tool_version(&path?)?)))
                .collect(),
        }
    }
}

/// What `compute` says of the file `tool`, remembered (under `what`) while the file is the same:
/// facts read from large tool binaries or by starting them cost more than a build may spend.
fn remembered<T>(what: &str, tool: &Path, compute: impl FnOnce(&Path) -> Option<T>) -> Option<T>
where
    T: Clone + serde::Serialize + serde::de::DeserializeOwned,
{
    #[derive(serde::Serialize, serde::Deserialize)]
    #[serde(bound(deserialize = "T: serde::de::DeserializeOwned"))]
    struct Cached<T> {
        tool: PathBuf,
        stamp: crate::cache::Stamp,
        // Required (serde would read a missing `Option` as `None`): an entry of another layout
        // is recomputed, not taken for "not found".
        #[serde(deserialize_with = "Option::deserialize")]
        value: Option<T>,
    }
    let stamp = crate::cache::Stamp::of(tool)?;
    let key = crate::project::fnv1a(&tool.to_string_lossy());
    let path = oxide_home().join("cache").join(format!("{what}-{key:016x}.json"));
    if let Some(cached) = crate::cache::read::<Cached<T>>(&path)
        && cached.tool == tool
        && cached.stamp == stamp
    {
        return cached.value;
    }
    let value = compute(tool);
    crate::cache::write(&path, &Cached { tool: tool.to_path_buf(), stamp, value: value.clone() });
    value
}

/// The CUDA release of a compiler binary (libNVVM, `nvcc`), read from the banner it carries:
/// finding it in a 70 MB libNVVM takes a tenth of a second (seconds in a debug build).
pub fn cuda_release(tool: &Path) -> Option<CudaRelease> {
    remembered("cuda-release", tool, |tool| {
        let bytes = std::fs::read(tool).ok()?;
        let at = memchr::memmem::find(&bytes, COMPILER_BANNER)?;
        CudaRelease::after_banner(&bytes[at + COMPILER_BANNER.len()..])
    })
}

/// The line of `tool --version` that names its version (`LLVM version 22.1.4…`, `Cuda
/// compilation tools, release 13.5, V13.5.37`), for the manifest; remembered, because starting
/// `llc` and `ptxas` costs tens of milliseconds each, on every crate's device build otherwise.
pub fn tool_version(tool: &Path) -> Option<String> {
    remembered("tool-version", tool, |tool| {
        let out = Command::new(tool).arg("--version").output().ok()?;
        version_in(&String::from_utf8_lossy(&out.stdout)).map(str::to_string)
    })
}

/// The line of a `--version` text that says the version (else its last line: `llc` lists its
/// targets after the version, `ptxas` its build after it).
fn version_in(text: &str) -> Option<&str> {
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    lines().find(|l| l.contains(" version ") || l.contains(", release ")).or_else(|| lines().next_back())
}

/// The last non-empty line a tool prints for `arg` (`ptxas --version` → `Cuda compilation tools, …`).
pub fn version_line(tool: &Path, arg: &str) -> Option<String> {
    let out = Command::new(tool).arg(arg).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().map(str::trim).rfind(|l| !l.is_empty())?;
    Some(line.to_string())
}

/// The `oxide-rustc` next to the running `cargo-oxide`.
pub fn oxide_rustc() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("could not find the path of cargo-oxide itself")?;
    let path = exe.with_file_name("oxide-rustc");
    if !path.is_file() {
        bail!(
            "`oxide-rustc` not found next to cargo-oxide (looked for {}); run `./x setup` in the cuda-oxide checkout (see its README)",
            path.display()
        );
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_toolchain_matches_rust_toolchain_toml() {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../rust-toolchain.toml");
        let text = std::fs::read_to_string(file).expect("read rust-toolchain.toml");
        assert!(text.contains(&format!("channel = \"{PINNED_TOOLCHAIN}\"")), "{text}");
        for c in COMPONENTS {
            assert!(text.contains(&format!("\"{c}\"")), "{c} missing from {text}");
        }
    }

    #[test]
    fn the_version_line_of_llc_and_ptxas() {
        let llc = "LLVM (http://llvm.org/):\n  LLVM version 22.1.4-rust-1.97.0-nightly\n  Optimized build.\n\n  Registered Targets:\n    xtensa      - Xtensa 32\n";
        assert_eq!(version_in(llc), Some("LLVM version 22.1.4-rust-1.97.0-nightly"));
        let ptxas = "ptxas: NVIDIA (R) Ptx optimizing assembler\nCopyright (c) 2005-2026 NVIDIA Corporation\nCuda compilation tools, release 13.5, V13.5.37\nBuild cuda_13.5.r13.5/compiler.39125733_0\n";
        assert_eq!(version_in(ptxas), Some("Cuda compilation tools, release 13.5, V13.5.37"));
        assert_eq!(version_in("tool 1.0\n\n"), Some("tool 1.0"));
        assert_eq!(version_in(""), None);
    }

    #[test]
    fn x_script_pins_the_same_toolchain() {
        let x = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../x")).expect("read ./x");
        assert!(x.contains(&format!("TOOLCHAIN={PINNED_TOOLCHAIN}\n")), "./x pins another toolchain");
        assert!(x.contains(&format!("COMPONENTS={}\n", COMPONENTS.join(","))), "./x installs other components");
    }

    #[test]
    fn finds_tools_in_the_wheel_layout() {
        let root = std::env::temp_dir().join(format!("oxide-cuda-layout-{}", std::process::id()));
        for rel in ["bin/ptxas", "bin/fatbinary", "lib/libnvvm.so.4", "nvvm/libdevice/libdevice.10.bc"] {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, b"").unwrap();
        }
        let found = CudaTools::find_in(std::slice::from_ref(&root));
        let _ = std::fs::remove_dir_all(&root);
        assert!(found.complete(), "{found:?}");
        assert!(found.libnvvm.unwrap().ends_with("lib/libnvvm.so.4"));
    }
}
