//! Element types a Python array can carry into a kernel, by their names on both sides.

/// A kernel element type with its names in Python: the `__cuda_array_interface__` typestr and the
/// PyTorch dtype.
///
/// # Safety
/// `T`'s size and bit layout must be those of the typestr and of the PyTorch dtype, so that a
/// buffer of them is a valid `[T]`.
pub unsafe trait Element: cuda_core::DeviceCopy {
    /// `__cuda_array_interface__` typestr (little endian), e.g. `<f4`.
    const TYPESTR: &'static str;
    /// The `torch` attribute naming the dtype, e.g. `float32`.
    const TORCH: &'static str;
}

macro_rules! elements {
    ($($t:ty => $typestr:literal, $torch:literal;)*) => {$(
        // SAFETY: the typestr and dtype have exactly this type's size and layout.
        unsafe impl Element for $t {
            const TYPESTR: &'static str = $typestr;
            const TORCH: &'static str = $torch;
        }
    )*};
}

elements! {
    f32 => "<f4", "float32";
    f64 => "<f8", "float64";
    f16 => "<f2", "float16";
    i8 => "|i1", "int8";
    u8 => "|u1", "uint8";
    i16 => "<i2", "int16";
    u16 => "<u2", "uint16";
    i32 => "<i4", "int32";
    u32 => "<u4", "uint32";
    i64 => "<i8", "int64";
    u64 => "<u8", "uint64";
    bool => "|b1", "bool";
}

/// Whether typestr `found` denotes `T` (`=` and `<` are the same byte order on the little-endian
/// hosts CUDA runs on; one-byte types may be written `|`, `<` or `>`).
pub(crate) fn typestr_matches<T: Element>(found: &str) -> bool {
    let normalise = |s: &str| {
        let (order, rest) = s.split_at(s.len().min(1));
        let order = match order {
            "=" | "<" => "<",
            other => other,
        };
        (order.to_string(), rest.to_string())
    };
    let (want_order, want) = normalise(T::TYPESTR);
    let (found_order, found_rest) = normalise(found);
    if want_order == "|" {
        return found_rest == want;
    }
    found_order == want_order && found_rest == want
}

/// A typestr in words, for messages (`<f8` is float64).
pub(crate) fn typestr_name(typestr: &str) -> String {
    let rest = typestr.get(1..).unwrap_or("");
    let (kind, bytes) = rest.split_at(rest.len().min(1));
    let bits = bytes.parse::<u32>().map(|b| b * 8).ok();
    let kind = match kind {
        "f" => "float",
        "i" => "int",
        "u" => "uint",
        "b" => return "bool".into(),
        "c" => "complex",
        _ => return format!("typestr `{typestr}`"),
    };
    match bits {
        Some(bits) => format!("{kind}{bits}"),
        None => format!("typestr `{typestr}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typestrs() {
        assert!(typestr_matches::<f32>("<f4"));
        assert!(typestr_matches::<f32>("=f4"));
        assert!(!typestr_matches::<f32>("<f8"));
        assert!(!typestr_matches::<f32>(">f4"));
        assert!(typestr_matches::<u8>("|u1"));
        assert!(typestr_matches::<u8>("<u1"));
        assert!(!typestr_matches::<u8>("|i1"));
        assert_eq!(typestr_name("<f8"), "float64");
        assert_eq!(typestr_name("|u1"), "uint8");
        assert_eq!(typestr_name("<c8"), "complex64");
        assert_eq!(typestr_name("<b1"), "bool");
        assert_eq!(typestr_name("<V16"), "typestr `<V16`");
    }
}
