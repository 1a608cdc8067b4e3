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

/// The key of one type argument: the 64 bits of its `TypeId` that `Hash for TypeId` feeds a
/// hasher. The backend computes the same bits from rustc's type-id hash (`>> 64` of it), so the
/// host and the device agree even where `type_name` does not tell types apart (two closures of
/// one function are both `f::{{closure}}`).
pub fn type_key<T: ?Sized + 'static>() -> u64 {
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
    core::any::TypeId::of::<T>().hash(&mut grab);
    grab.0
}

/// The PTX entry name of kernel `base` instantiated with type arguments whose [`type_key`]s are
/// `type_keys` (in declaration order).
///
/// `base` alone for a non-generic kernel; otherwise `{base}_{hash:016x}` where `hash` is
/// [`fnv1a64`] of the keys' little-endian bytes.
pub fn entry_name(base: &str, type_keys: &[u64]) -> String {
    if type_keys.is_empty() {
        return base.to_string();
    }
    let bytes: Vec<u8> = type_keys.iter().flat_map(|k| k.to_le_bytes()).collect();
    format!("{base}_{:016x}", fnv1a64(&bytes))
}

/// The global symbol holding the bundle of crate `crate_name`: `__cuda_oxide_bundle_<crate_name>`.
pub fn bundle_symbol(crate_name: &str) -> String {
    format!("__cuda_oxide_bundle_{crate_name}")
}

/// The PTX symbol of a `ConstantMemory` static named `static_name` (its item name, as CUDA C++
/// names a `__constant__` variable): what `cuModuleGetGlobal` looks up. Unique per crate (the
/// backend rejects two with one name).
pub fn constant_symbol(static_name: &str) -> String {
    static_name.to_string()
}

/// Object-file section holding a bundle.
pub const BUNDLE_SECTION: &str = ".cuda_oxide_bundle";

/// `<artifact_dir>/<crate_name>/`, where one crate's files and `manifest.json` live.
pub fn crate_artifact_dir(artifact_dir: &Path, crate_name: &str) -> PathBuf {
    artifact_dir.join(crate_name)
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

    /// `<crate>.fatbin`.
    pub fn fatbin(crate_name: &str) -> String {
        format!("{crate_name}.fatbin")
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
    fn plain_and_generic_names() {
        assert_eq!(entry_name("vecadd", &[]), "vecadd");
        let n = entry_name("scale", &[type_key::<f32>()]);
        assert_eq!(n.len(), "scale_".len() + 16);
        assert_ne!(n, entry_name("scale", &[type_key::<f64>()]));
        assert_ne!(entry_name("map", &[1, 2]), entry_name("map", &[2, 1]));
    }

    #[test]
    fn closures_of_one_function_get_different_keys() {
        fn key_of<F: 'static>(_: &F) -> u64 {
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
    }

    #[test]
    fn bundle_symbol_names() {
        assert_eq!(bundle_symbol("hello"), "__cuda_oxide_bundle_hello");
    }
}
