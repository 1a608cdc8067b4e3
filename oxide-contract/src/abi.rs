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
    /// `DisjointSlice<T>` (of an index space with no runtime layout): pointer + u64 length.
    DisjointSlice,
    /// `DisjointSlice<T, Runtime2DIndex>` and other index spaces with a runtime row width
    /// ([`ROW_WIDTH_SPACES`]): pointer + u64 length + u32 row width.
    RowWidthSlice,
    /// A scalar or raw pointer, by value.
    Scalar,
    /// A closure, struct, tuple or array: one byval `.param` with the host layout.
    Byval,
    /// Zero-sized: no PTX parameter at all.
    Zst,
}

/// The `kernelParams` entries of a slice kind: the pointer, then the length as `u64`.
pub const SLICE_SLOTS: usize = 2;

/// The pointer a launch passes for an empty slice: never null, so the backend can mark every
/// slice pointer `nonnull` (an `if let Some(c) = out.get_mut(i)` then tests no null niche), and
/// aligned for any element. It is never dereferenced: no index is below a length of 0.
pub const EMPTY_SLICE_ADDRESS: u64 = 4096;

/// The `kernelParams` entries of a [`ParamKind::RowWidthSlice`]: pointer, `u64` length, `u32` width.
pub const ROW_WIDTH_SLICE_SLOTS: usize = 3;

impl ParamKind {
    /// `true` for the kinds passed as pointer + length.
    pub fn is_slice(self) -> bool {
        matches!(self, ParamKind::Slice | ParamKind::SliceMut | ParamKind::DisjointSlice | ParamKind::RowWidthSlice)
    }

    /// How many entries this parameter takes in the `kernelParams` array of a launch.
    pub fn launch_slots(self) -> usize {
        match self {
            ParamKind::Slice | ParamKind::SliceMut | ParamKind::DisjointSlice => SLICE_SLOTS,
            ParamKind::RowWidthSlice => ROW_WIDTH_SLICE_SLOTS,
            ParamKind::Scalar | ParamKind::Byval => 1,
            ParamKind::Zst => 0,
        }
    }

    /// What the host passes for a parameter of this kind.
    pub fn launch_arg(self) -> LaunchArg {
        match self {
            ParamKind::Slice => LaunchArg::Buffer,
            ParamKind::SliceMut | ParamKind::DisjointSlice => LaunchArg::BufferMut,
            ParamKind::RowWidthSlice => LaunchArg::RowWidth,
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
    /// `DisjointSlice<T, Runtime2DIndex>` → `RowWidth<T>`: a `&mut DeviceBuffer<T>` and its row width.
    RowWidth,
    /// Anything else, by value (zero-sized values push nothing).
    Value,
}

impl LaunchArg {
    /// Every variant, in declaration order.
    pub const ALL: [LaunchArg; 4] = [LaunchArg::Buffer, LaunchArg::BufferMut, LaunchArg::RowWidth, LaunchArg::Value];

    /// The spelling in the kernel's tool attribute (`oxide::kernel(buffer, value)`).
    pub fn name(self) -> &'static str {
        match self {
            LaunchArg::Buffer => "buffer",
            LaunchArg::BufferMut => "buffer_mut",
            LaunchArg::RowWidth => "row_width",
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
            LaunchArg::RowWidth => {
                "`DisjointSlice<T, Runtime2DIndex>` (or another index space with a runtime row width)"
            }
            LaunchArg::Value => "a value (scalar, raw pointer, closure or struct)",
        }
    }
}

/// The type name `#[kernel]` recognises as a disjoint output slice (its last path segment); the
/// backend recognises the type itself by its lang attribute ([`crate::attrs::LangItem`]).
pub const DISJOINT_SLICE_TYPE: &str = "DisjointSlice";

/// Index spaces (the last path segment of `DisjointSlice`'s second type argument) whose slices
/// carry a runtime row width, passed by the host as a third word ([`ParamKind::RowWidthSlice`]).
/// `#[kernel]` recognises them by name; the backend by the slice's layout.
pub const ROW_WIDTH_SPACES: [&str; 2] = ["Runtime2DIndex", "RuntimeRowMajorTiles"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_and_launch_args() {
        let all = [
            ParamKind::Slice,
            ParamKind::SliceMut,
            ParamKind::DisjointSlice,
            ParamKind::RowWidthSlice,
            ParamKind::Scalar,
            ParamKind::Byval,
            ParamKind::Zst,
        ];
        let slots: Vec<usize> = all.iter().map(|k| k.launch_slots()).collect();
        assert_eq!(slots, [2, 2, 2, 3, 1, 1, 0]);
        for k in all {
            assert_eq!(k.is_slice(), k.launch_arg() != LaunchArg::Value);
        }
        for a in LaunchArg::ALL {
            assert_eq!(LaunchArg::from_name(a.name()), Some(a));
        }
        assert_eq!(LaunchArg::from_name("slice"), None);
    }
}
