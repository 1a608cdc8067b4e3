//! Names the host and the device must agree on: PTX entry names of kernels (contract §5), the
//! bundle's symbol and section (§6), and the artifact files of a crate (§7).

use std::path::{Path, PathBuf};

/// 64-bit FNV-1a of `bytes`.
pub const fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    hash
}

/// The 64 bits of `id` that `Hash for TypeId` feeds a hasher. The backend computes the same bits
/// from rustc's type-id hash (`>> 64` of it: [`key_from_type_id_hash`]).
fn type_id_bits(id: core::any::TypeId) -> u64 {
    use core::hash::{Hash, Hasher};
    struct Grab(u64);
    impl Hasher for Grab {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            self.0 = fnv1a64(bytes);
        }
        fn write_u64(&mut self, v: u64) {
            self.0 = v;
        }
    }
    let mut grab = Grab(0);
    id.hash(&mut grab);
    grab.0
}

/// The key of a type: 64 bits of its `TypeId`, with its lifetimes erased, so that it needs no
/// `'static` bound (generic kernels may take closures that borrow, or types with lifetimes).
/// The backend computes the same bits for the same type ([`key_from_type_id_hash`]), so host and
/// device agree even where `type_name` does not tell types apart (two closures of one function
/// are both `f::{{closure}}`).
pub fn type_key<T: ?Sized>() -> u64 {
    type_id_bits(typeid::of::<T>())
}

/// The key of one kernel instance: the [`type_key`] of its function item type (`kernel::<T, F>`),
/// which rustc derives from the kernel's path, its crate and its type arguments. So it tells
/// apart two kernels of one name in different modules or crates, and every instance of a generic
/// kernel. The generated launch methods look kernels up by this key (manifest `key`).
pub fn kernel_key<F>(_kernel_fn_item: &F) -> u64 {
    type_key::<F>()
}

/// What the backend turns rustc's 128-bit type-id hash into: the bits [`type_key`] sees.
pub fn key_from_type_id_hash(hash: u128) -> u64 {
    (hash >> 64) as u64
}

/// The PTX entry name of a kernel: its Rust name `base` when that names exactly one kernel of the
/// crate (`plain`), so that PTX stays readable and loaders by name keep working; otherwise (an
/// instance of a generic kernel, or a name used by kernels in several modules)
/// `{base}_{key:016x}`.
pub fn entry_name(base: &str, key: u64, plain: bool) -> String {
    if plain { base.to_string() } else { format!("{base}_{key:016x}") }
}

/// The prefix of libdevice's functions (`__nv_sinf`, …), which the device linker resolves.
pub const LIBDEVICE_PREFIX: &str = "__nv_";

/// Names a kernel entry must not take, since the device module declares or links functions of
/// that name itself: `vprintf` and `__assertfail` (printing, asserts), libdevice's `__nv_*`, LLVM's
/// `llvm.*`, the runtime's `malloc`/`free`, our `__oxide_*`, and the names of unchecked twins
/// (`*__oxide_fast_*`, [`crate::fast_launch`]). A kernel named like one gets a keyed entry name
/// instead.
pub fn is_reserved_entry_name(name: &str) -> bool {
    matches!(name, "vprintf" | "__assertfail" | "malloc" | "free")
        || [LIBDEVICE_PREFIX, "llvm.", "__oxide_", "__cuda", "__nvvm"].iter().any(|p| name.starts_with(p))
        || name.contains(crate::fast_launch::TWIN_MARK)
}

/// The global symbol holding the bundle of crate `crate_name`, whose rustc `StableCrateId` is
/// `crate_id`: `__cuda_oxide_bundle_<crate_name>_<crate_id:016x>`. The id tells apart crates of one
/// name (a package's library and binary). The backend exports it as a `used` symbol of the crate,
/// so that linking the crate from an rlib keeps the bundle; nothing refers to it by name.
pub fn bundle_symbol(crate_name: &str, crate_id: u64) -> String {
    format!("__cuda_oxide_bundle_{crate_name}_{crate_id:016x}")
}

/// The section of every bundle: a C identifier, so the linker defines `__start_cuda_oxide_bundles`
/// and `__stop_cuda_oxide_bundles` around all of them and the runtime can find every bundle the
/// binary holds (a generic kernel's instances may live in the bundle of the crate that
/// instantiated it, not the crate that defined it).
pub const BUNDLE_SECTION: &str = "cuda_oxide_bundles";

/// `<artifact_dir>/<crate_dir>/`, where one crate's files and `manifest.json` live
/// ([`crate_dir_name`]).
pub fn crate_artifact_dir(artifact_dir: &Path, crate_dir: &str) -> PathBuf {
    artifact_dir.join(crate_dir)
}

/// The folder of one profile's device artifacts below the target directory of `cargo oxide`
/// (`<target>/oxide`): `<profile dir>/device`, next to the binaries of that profile, so that
/// debug and release builds never show each other's PTX.
pub fn device_artifact_dir(oxide_target_dir: &Path, profile: &str) -> PathBuf {
    oxide_target_dir.join(profile_dir(profile)).join(DEVICE_DIR)
}

/// The subfolder of a profile's output folder holding the device artifacts.
pub const DEVICE_DIR: &str = "device";

/// The folder cargo writes a profile's outputs to: `debug` for `dev` and `test`, `release` for
/// `release` and `bench`, the name itself for a custom profile.
pub fn profile_dir(profile: &str) -> &str {
    match profile {
        "dev" | "test" => "debug",
        "bench" => "release",
        other => other,
    }
}

/// The folder of a profile's `<crate>.ptx` files (`files::by_name_ptx`), which programs load by
/// file name (`CudaContext::load_module_from_file("app.ptx")`, NVIDIA's loaders): the profile's
/// output folder under `cargo oxide`'s target directory (`<target>/oxide/<profile dir>`), beside
/// the binaries of that profile, where [`by_name_dirs_of_exe`] looks. Never the source tree,
/// unless the user asks for it there too.
pub fn by_name_ptx_dir(oxide_target_dir: &Path, profile: &str) -> PathBuf {
    oxide_target_dir.join(profile_dir(profile))
}

/// Where a program looks for a device code file by name, next to its executable `exe`: the
/// executable's folder and, for an example or a test harness (in `examples/` or `deps/` of a
/// profile's output folder), the profile's output folder above it ([`by_name_ptx_dir`]).
pub fn by_name_dirs_of_exe(exe: &Path) -> Vec<PathBuf> {
    let Some(dir) = exe.parent() else { return Vec::new() };
    let mut out = vec![dir.to_path_buf()];
    if dir.file_name().is_some_and(|n| n == "examples" || n == "deps")
        && let Some(profile_dir) = dir.parent()
    {
        out.push(profile_dir.to_path_buf());
    }
    out
}

/// What kind of crate a bundle comes from, for the name of its artifact folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrateRole {
    /// A library, or a binary whose name no library of the build shares.
    Plain,
    /// A binary named like a library it links (a package's `src/main.rs` beside its `src/lib.rs`).
    BinaryBesideLibrary,
    /// A test harness (`cargo test` compiles a library again as one, at the same time).
    TestHarness,
}

/// The artifact folder of a crate: `<crate>`, `<crate>.bin` or `<crate>.test` (see [`CrateRole`]),
/// so that crates of one name never overwrite each other's files.
pub fn crate_dir_name(crate_name: &str, role: CrateRole) -> String {
    match role {
        CrateRole::Plain => crate_name.to_string(),
        CrateRole::BinaryBesideLibrary => format!("{crate_name}.bin"),
        CrateRole::TestHarness => format!("{crate_name}.test"),
    }
}

/// The PTX symbol of a `ConstantMemory` static named `static_name` (its item name, as CUDA C++
/// names a `__constant__` variable): what `cuModuleGetGlobal` looks up. Unique per crate (the
/// backend rejects two with one name).
pub fn constant_symbol(static_name: &str) -> String {
    static_name.to_string()
}

/// The folders a module named `name` (a crate or package name) may be in, most likely first.
pub fn crate_dir_candidates(name: &str) -> Vec<String> {
    let crate_name = name.replace('-', "_");
    let mut out = vec![name.to_string()];
    if crate_name != name {
        out.push(crate_name.clone());
    }
    out.push(crate_dir_name(&crate_name, CrateRole::BinaryBesideLibrary));
    out.push(crate_dir_name(&crate_name, CrateRole::TestHarness));
    out
}

/// Per-crate artifact file names (contract §7).
pub mod files {
    use crate::arch::Arch;

    /// `manifest.json`.
    pub const MANIFEST: &str = "manifest.json";

    /// `<crate>.ll`.
    pub fn llvm_ir(crate_name: &str) -> String {
        format!("{crate_name}.ll")
    }

    /// `<crate>.<arch>.ptx`.
    pub fn ptx(crate_name: &str, arch: Arch) -> String {
        format!("{crate_name}.{arch}.ptx")
    }

    /// `<crate>.<arch>.cubin`.
    pub fn cubin(crate_name: &str, arch: Arch) -> String {
        format!("{crate_name}.{arch}.cubin")
    }

    /// `<crate>.<arch>.ltoir`.
    pub fn ltoir(crate_name: &str, arch: Arch) -> String {
        format!("{crate_name}.{arch}.ltoir")
    }

    /// `<crate>.<source stem>.<arch>.ltoir`: the LTOIR of one CUDA C++ source the crate links.
    pub fn source_ltoir(crate_name: &str, source_stem: &str, arch: Arch) -> String {
        format!("{crate_name}.{source_stem}.{arch}.ltoir")
    }

    /// `<crate>.fatbin`.
    pub fn fatbin(crate_name: &str) -> String {
        format!("{crate_name}.fatbin")
    }

    /// `<crate>.ptx`: the one PTX file of a crate that programs load by file name (in
    /// [`by_name_ptx_dir`](super::by_name_ptx_dir)).
    pub fn by_name_ptx(crate_name: &str) -> String {
        format!("{crate_name}.ptx")
    }

    /// `<crate>.h`: the C declarations of the crate's exported device functions, for CUDA C++.
    pub fn c_header(crate_name: &str) -> String {
        format!("{crate_name}.h")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn plain_and_keyed_names() {
        assert_eq!(entry_name("vecadd", 7, true), "vecadd");
        let n = entry_name("scale", type_key::<f32>(), false);
        assert_eq!(n.len(), "scale_".len() + 16);
        assert_ne!(n, entry_name("scale", type_key::<f64>(), false));
    }

    #[test]
    fn keys_need_no_static_and_ignore_lifetimes() {
        fn key_of_ref<'a>(_: &'a u32) -> u64 {
            type_key::<&'a u32>()
        }
        let local = 5u32;
        assert_eq!(key_of_ref(&local), type_key::<&'static u32>());
        fn scale<T>(_: T) {}
        assert_eq!(kernel_key(&scale::<f32>), kernel_key(&scale::<f32>));
        assert_ne!(kernel_key(&scale::<f32>), kernel_key(&scale::<f64>));
        mod other {
            pub fn scale<T>(_: T) {}
        }
        assert_ne!(kernel_key(&scale::<f32>), kernel_key(&other::scale::<f32>));
    }

    #[test]
    fn closures_of_one_function_get_different_keys() {
        fn key_of<F>(_: &F) -> u64 {
            type_key::<F>()
        }
        let double = |x: f32| x * 2.0;
        let inc = |x: f32| x + 1.0;
        assert_ne!(key_of(&double), key_of(&inc));
        assert_eq!(key_of(&double), key_of(&double));
    }

    #[test]
    fn file_names() {
        let a = crate::arch::Arch::parse("sm_90").unwrap();
        assert_eq!(files::ptx("hello", a), "hello.sm_90.ptx");
        assert_eq!(files::cubin("hello", a), "hello.sm_90.cubin");
        assert_eq!(files::fatbin("hello"), "hello.fatbin");
        assert_eq!(files::llvm_ir("hello"), "hello.ll");
        assert_eq!(files::ltoir("hello", a), "hello.sm_90.ltoir");
        assert_eq!(files::source_ltoir("hello", "ops", a), "hello.ops.sm_90.ltoir");
        assert_eq!(files::c_header("hello"), "hello.h");
    }

    #[test]
    fn runtime_names_are_reserved() {
        for name in [
            "vprintf",
            "__assertfail",
            "__nv_sinf",
            "llvm.trap",
            "__oxide_dynamic_shared",
            "vecadd__oxide_fast_0123456789abcdef",
        ] {
            assert!(is_reserved_entry_name(name), "{name}");
        }
        assert!(!is_reserved_entry_name("vecadd") && !is_reserved_entry_name("printf"));
    }

    #[test]
    fn artifact_folders() {
        let dir = device_artifact_dir(Path::new("/t/oxide"), "dev");
        assert_eq!(dir, Path::new("/t/oxide/debug/device"));
        assert_eq!(device_artifact_dir(Path::new("/t"), "bench"), Path::new("/t/release/device"));
        assert_eq!(device_artifact_dir(Path::new("/t"), "profiling"), Path::new("/t/profiling/device"));
        assert_eq!(crate_dir_name("app", CrateRole::BinaryBesideLibrary), "app.bin");
        assert_eq!(crate_dir_candidates("my-app"), ["my-app", "my_app", "my_app.bin", "my_app.test"]);
    }

    #[test]
    fn by_name_ptx_files_live_beside_the_binaries() {
        assert_eq!(by_name_ptx_dir(Path::new("/t/oxide"), "dev"), Path::new("/t/oxide/debug"));
        assert_eq!(by_name_ptx_dir(Path::new("/t/oxide"), "bench"), Path::new("/t/oxide/release"));
        assert_eq!(files::by_name_ptx("app"), "app.ptx");
        // A binary: its own folder, which is the profile's output folder.
        assert_eq!(by_name_dirs_of_exe(Path::new("/t/oxide/release/app")), [Path::new("/t/oxide/release")]);
        // An example or a test harness: also the profile's folder above.
        assert_eq!(
            by_name_dirs_of_exe(Path::new("/t/oxide/debug/examples/demo")),
            [Path::new("/t/oxide/debug/examples"), Path::new("/t/oxide/debug")]
        );
        assert_eq!(by_name_dirs_of_exe(Path::new("/t/oxide/debug/deps/app-0123abcd")).len(), 2);
        // A binary copied anywhere else: only its folder.
        assert_eq!(by_name_dirs_of_exe(Path::new("/opt/bin/app")), [Path::new("/opt/bin")]);
    }

    #[test]
    fn bundle_symbol_names() {
        assert_eq!(bundle_symbol("hello", 0xab), "__cuda_oxide_bundle_hello_00000000000000ab");
    }
}
