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

/// The PTX entry name of kernel `base` instantiated with `type_args`.
///
/// `base` alone for a non-generic kernel; otherwise `{base}_{hash:016x}` where `hash` is
/// [`fnv1a64`] of the type arguments, each spelled as `core::any::type_name` spells it, joined
/// with `,`.
pub fn entry_name<S: AsRef<str>>(base: &str, type_args: &[S]) -> String {
    if type_args.is_empty() {
        return base.to_string();
    }
    let joined: Vec<&str> = type_args.iter().map(AsRef::as_ref).collect();
    format!("{base}_{:016x}", fnv1a64(joined.join(",").as_bytes()))
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
        assert_eq!(entry_name::<&str>("vecadd", &[]), "vecadd");
        let n = entry_name("scale", &["f32"]);
        assert_eq!(n, format!("scale_{:016x}", fnv1a64(b"f32")));
        assert_eq!(n.len(), "scale_".len() + 16);
        assert_eq!(entry_name("map", &["f32", "u8"]), format!("map_{:016x}", fnv1a64(b"f32,u8")));
        assert_ne!(entry_name("scale", &["f32"]), entry_name("scale", &["f64"]));
        assert_eq!(entry_name("scale", &[core::any::type_name::<f32>()]), entry_name("scale", &["f32"]));
    }
}
