//! Types and values of the IR model: what an operand is, and of which type.

use std::fmt;

/// An IR type. The forms the passes reason about are structured; any other (a named struct, a
/// function type, `x86_fp80`) is kept as its text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// `iN`.
    Int(u32),
    /// `ptr`, `ptr addrspace(N)`.
    Ptr(u32),
    Half,
    BFloat,
    Float,
    Double,
    Void,
    Label,
    Metadata,
    /// `<N x T>`.
    Vector(u32, Box<Type>),
    /// `[N x T]`.
    Array(u64, Box<Type>),
    /// `{ T, … }` (literal, not packed).
    Struct(Vec<Type>),
    Other(String),
}

pub const I1: Type = Type::Int(1);
pub const I32: Type = Type::Int(32);
pub const I64: Type = Type::Int(64);

impl Type {
    /// Bits of an integer type of at most 64 bits (`i32` → 32); `None` for any other type.
    pub fn int_bits(&self) -> Option<u32> {
        match self {
            Type::Int(b) if (1..=64).contains(b) => Some(*b),
            _ => None,
        }
    }

    /// The largest unsigned value of an integer type (`u64::MAX` for `i64`).
    pub fn mask(&self) -> Option<u64> {
        self.int_bits().map(|b| if b == 64 { u64::MAX } else { (1u64 << b) - 1 })
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Int(b) => write!(f, "i{b}"),
            Type::Ptr(0) => f.write_str("ptr"),
            Type::Ptr(a) => write!(f, "ptr addrspace({a})"),
            Type::Half => f.write_str("half"),
            Type::BFloat => f.write_str("bfloat"),
            Type::Float => f.write_str("float"),
            Type::Double => f.write_str("double"),
            Type::Void => f.write_str("void"),
            Type::Label => f.write_str("label"),
            Type::Metadata => f.write_str("metadata"),
            Type::Vector(n, t) => write!(f, "<{n} x {t}>"),
            Type::Array(n, t) => write!(f, "[{n} x {t}]"),
            Type::Struct(fields) => {
                f.write_str("{ ")?;
                for (i, t) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(" }")
            }
            Type::Other(text) => f.write_str(text),
        }
    }
}

/// An operand.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// A local value (parameter or instruction result), by name without `%` (quotes kept).
    Local(String),
    /// A global, by name without `@`.
    Global(String),
    /// A constant as written: `-1`, `true`, `null`, `poison`, `1.000000e+00`, `<i32 1, i32 2>`, …
    Const(String),
}

impl Value {
    pub fn local(name: &str) -> Value {
        Value::Local(name.to_string())
    }

    /// An integer constant (printed signed, as `opt` does: `-1` rather than `18446744073709551615`).
    pub fn int(v: u64, ty: &Type) -> Value {
        if *ty == I1 {
            return Value::Const(if v & 1 == 1 { "true" } else { "false" }.to_string());
        }
        let bits = ty.int_bits().unwrap_or(64);
        let shift = 64 - bits;
        Value::Const((((v << shift) as i64) >> shift).to_string())
    }

    pub fn bool(v: bool) -> Value {
        Value::int(u64::from(v), &I1)
    }

    /// The local's name, if this is one.
    pub fn as_local(&self) -> Option<&str> {
        match self {
            Value::Local(n) => Some(n),
            _ => None,
        }
    }

    /// This integer constant of type `ty` as unsigned (reduced to the type's width).
    pub fn as_int(&self, ty: &Type) -> Option<u64> {
        let Value::Const(text) = self else { return None };
        let mask = ty.mask()?;
        let v = match text.as_str() {
            "true" => 1,
            "false" => 0,
            t => t.parse::<i128>().ok()? as u64,
        };
        Some(v & mask)
    }

    /// This integer constant of type `ty` if it is not negative read as signed, as `opt` prints it
    /// (`-1` is not; `255` of `i8` is not either, though `as_int` reads it).
    pub fn as_non_negative(&self, ty: &Type) -> Option<u64> {
        let v = self.as_int(ty)?;
        let sign = 1u64 << (ty.int_bits()? - 1);
        (v & sign == 0).then_some(v)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Local(n) => write!(f, "%{n}"),
            Value::Global(n) => write!(f, "@{n}"),
            Value::Const(c) => f.write_str(c),
        }
    }
}

/// `name` (without `%`, maybe quoted) with `prefix` in front, quoted where the name is.
pub fn prefixed(prefix: &str, name: &str) -> String {
    match name.strip_prefix('"') {
        Some(quoted) => format!("\"{prefix}{quoted}"),
        None => format!("{prefix}{name}"),
    }
}

/// Whether `name` (without `%`) is a numbered name (`7`), which must follow the function's order.
pub fn is_numbered(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_print_signed_and_read_unsigned() {
        assert_eq!(Value::int(u64::MAX, &I64).to_string(), "-1");
        assert_eq!(Value::int(0xffff_ffff, &I32).to_string(), "-1");
        assert_eq!(Value::int(5, &I1).to_string(), "true");
        assert_eq!(Value::Const("-1".into()).as_int(&I32), Some(0xffff_ffff));
        assert_eq!(Value::Const("18446744073709551615".into()).as_int(&I64), Some(u64::MAX));
        assert_eq!(Value::Const("true".into()).as_int(&I1), Some(1));
        assert_eq!(Value::Const("null".into()).as_int(&I64), None);
        assert_eq!(Value::Const("9223372036854775807".into()).as_non_negative(&I64), Some(i64::MAX as u64));
        assert_eq!(Value::Const("-9223372034707292160".into()).as_non_negative(&I64), None);
        assert_eq!(Value::Const("255".into()).as_non_negative(&Type::Int(8)), None);
        assert_eq!(Value::Const("0".into()).as_non_negative(&I32), Some(0));
        assert_eq!(Type::Struct(vec![I64, I1]).to_string(), "{ i64, i1 }");
        assert_eq!(Type::Ptr(3).to_string(), "ptr addrspace(3)");
        assert_eq!(prefixed("oxide.fast.", "\"a b\""), "\"oxide.fast.a b\"");
    }
}
