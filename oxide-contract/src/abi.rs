//! The kernel ABI (contract §4): how each kernel parameter crosses from the host's launch to the
//! PTX entry point.
//!
//! Two sides classify a parameter and must agree. `#[kernel]` sees only syntax and decides what
//! the host passes ([`LaunchArg`]: a buffer, a mutable buffer or a value); the backend sees the
//! type and decides the PTX parameters ([`ParamKind`]). The macro writes its classification into
//! the kernel's tool attribute, and the backend checks it against [`ParamKind::launch_arg`], so a
//! disagreement is a compile error at the parameter instead of a launch with a wrong packet.

use serde::{Deserialize, Serialize};

/// How a parameter crosses the kernel boundary, as the backend classifies its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    /// `&[T]`: pointer (read-only, `ld.global.nc`) + u64 length.
    Slice,
    /// `&mut [T]`: pointer + u64 length.
    SliceMut,
    /// `DisjointSlice<T>`: pointer + u64 length.
    DisjointSlice,
    /// A scalar or raw pointer, by value.
    Scalar,
    /// A closure, struct, tuple or array: one byval `.param` with the host layout.
    Byval,
    /// Zero-sized: no PTX parameter at all.
    Zst,
}

/// The `kernelParams` entries of a slice kind: the pointer, then the length as `u64`.
pub const SLICE_SLOTS: usize = 2;

impl ParamKind {
    /// `true` for the kinds passed as pointer + length.
    pub fn is_slice(self) -> bool {
        matches!(self, ParamKind::Slice | ParamKind::SliceMut | ParamKind::DisjointSlice)
    }

    /// How many entries this parameter takes in the `kernelParams` array of a launch.
    pub fn launch_slots(self) -> usize {
        match self {
            ParamKind::Slice | ParamKind::SliceMut | ParamKind::DisjointSlice => SLICE_SLOTS,
            ParamKind::Scalar | ParamKind::Byval => 1,
            ParamKind::Zst => 0,
        }
    }

    /// What the host passes for a parameter of this kind.
    pub fn launch_arg(self) -> LaunchArg {
        match self {
            ParamKind::Slice => LaunchArg::Buffer,
            ParamKind::SliceMut | ParamKind::DisjointSlice => LaunchArg::BufferMut,
            ParamKind::Scalar | ParamKind::Byval | ParamKind::Zst => LaunchArg::Value,
        }
    }
}

/// What the host passes for a kernel parameter, as the launch methods and `cuda_launch!` build
/// the packet: a `&DeviceBuffer<T>`, a `&mut DeviceBuffer<T>`, or the value itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaunchArg {
    /// `&[T]` → `&DeviceBuffer<T>`.
    Buffer,
    /// `&mut [T]` or `DisjointSlice<T>` → `&mut DeviceBuffer<T>`.
    BufferMut,
    /// Anything else, by value (zero-sized values push nothing).
    Value,
}

impl LaunchArg {
    /// Every variant, in declaration order.
    pub const ALL: [LaunchArg; 3] = [LaunchArg::Buffer, LaunchArg::BufferMut, LaunchArg::Value];

    /// The spelling in the kernel's tool attribute (`oxide::kernel(buffer, value)`).
    pub fn name(self) -> &'static str {
        match self {
            LaunchArg::Buffer => "buffer",
            LaunchArg::BufferMut => "buffer_mut",
            LaunchArg::Value => "value",
        }
    }

    /// Inverse of [`LaunchArg::name`].
    pub fn from_name(name: &str) -> Option<LaunchArg> {
        LaunchArg::ALL.into_iter().find(|a| a.name() == name)
    }

    /// How the kernel's signature spells a parameter of this shape, for messages.
    pub fn rust_form(self) -> &'static str {
        match self {
            LaunchArg::Buffer => "`&[T]`",
            LaunchArg::BufferMut => "`&mut [T]` or `DisjointSlice<T>`",
            LaunchArg::Value => "a value (scalar, raw pointer, closure or struct)",
        }
    }
}

/// The type name `#[kernel]` recognises as a disjoint output slice (its last path segment); the
/// backend recognises the type itself by its lang attribute ([`crate::attrs::LangItem`]).
pub const DISJOINT_SLICE_TYPE: &str = "DisjointSlice";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_and_launch_args() {
        let all = [
            ParamKind::Slice,
            ParamKind::SliceMut,
            ParamKind::DisjointSlice,
            ParamKind::Scalar,
            ParamKind::Byval,
            ParamKind::Zst,
        ];
        let slots: Vec<usize> = all.iter().map(|k| k.launch_slots()).collect();
        assert_eq!(slots, [2, 2, 2, 1, 1, 0]);
        for k in all {
            assert_eq!(k.is_slice(), k.launch_arg() != LaunchArg::Value);
        }
        for a in LaunchArg::ALL {
            assert_eq!(LaunchArg::from_name(a.name()), Some(a));
        }
        assert_eq!(LaunchArg::from_name("slice"), None);
    }
}
