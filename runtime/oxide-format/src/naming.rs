//! PTX entry names of kernels (contract §5), computed the same way by the macros and the backend.

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
}
