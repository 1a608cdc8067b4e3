//! Names of the attributes that mark device code (contract §2) and of the special items of
//! `cuda_device` that the backend treats specially.
//!
//! `oxide-rustc` registers the tool [`TOOL`] and sets `--cfg` [`CFG`] in every crate; the macros
//! emit `#[cfg_attr(cuda_oxide, oxide::<name>(..))]`, so a plain `cargo build` still compiles the
//! host side. Special library items carry `#[cfg_attr(cuda_oxide, oxide::lang = "<name>")]` and
//! raw device operations `#[cfg_attr(cuda_oxide, oxide::intrinsic)]`: the backend looks these up
//! instead of matching paths.

/// The registered tool of every attribute below.
pub const TOOL: &str = "oxide";
/// The `cfg` set in every crate `oxide-rustc` compiles.
pub const CFG: &str = "cuda_oxide";

/// A `#[kernel]`: `oxide::kernel(<launch arg>, ..)`, one [`crate::abi::LaunchArg`] name per parameter.
pub const KERNEL: &str = "kernel";
/// A `#[device]` function (informational: every function a kernel reaches is device code).
pub const DEVICE: &str = "device";
/// `oxide::launch_bounds(max_threads[, min_blocks])`.
/// On the Rust stand-in of a function of a `#[device] extern "C"` block: CUDA C++ defines it;
/// the device compiler leaves a declaration under its C name for the device linker, the host
/// gets a body that panics.
pub const DEVICE_IMPORT: &str = "device_import";
pub const LAUNCH_BOUNDS: &str = "launch_bounds";
/// `oxide::cluster_launch(x, y, z)`.
pub const CLUSTER_LAUNCH: &str = "cluster_launch";
/// `oxide::cooperative_launch` (from `#[cooperative_launch]`): every launch of the kernel is
/// cooperative (all blocks resident at once), which `grid::sync()` needs.
pub const COOPERATIVE_LAUNCH: &str = "cooperative_launch";
/// `oxide::launch_contract(<LaunchContract::to_attr_args>)`: the kernel's `#[launch_contract]`
/// ([`crate::launch_contract::LaunchContract`]).
pub const LAUNCH_CONTRACT: &str = "launch_contract";
/// `oxide::fast_math` (from `#[fast_math]`): the function and everything it calls use
/// approximate division, square root and transcendentals.
pub const FAST_MATH: &str = "fast_math";
/// A raw device operation of `cuda_device::intrinsics`, whose body the backend supplies.
pub const INTRINSIC: &str = "intrinsic";
/// `oxide::lang = "<name>"` on a special item ([`LangItem`]).
pub const LANG: &str = "lang";

/// Items of `cuda_device` whose meaning the backend knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LangItem {
    /// `DisjointSlice<T>`: a kernel parameter of kind [`crate::abi::ParamKind::DisjointSlice`].
    DisjointSlice,
    /// `SharedArray<T, N, ALIGN>`: a `static mut` of this type lives in shared memory, one per block.
    SharedArray,
    /// `SharedMemory<T, N, ALIGN>`: the same, declared as a plain `static` (its element access is
    /// `unsafe`, so it is `Sync`). Both have the generic parameters `<T, N, ALIGN>`.
    SharedMemory,
    /// `ConstantMemory<T>`: a `static` of this type lives in the `.const` state space, under its
    /// own name (see [`crate::naming::constant_symbol`]).
    ConstantMemory,
    /// `cuda_core::tma::TensorMap`: a kernel parameter of this type by value is grid-constant —
    /// the kernel reads it in parameter memory (TMA needs its address there), never a copy.
    TensorMap,
}

impl LangItem {
    /// Every lang item.
    pub const ALL: [LangItem; 5] = [
        LangItem::DisjointSlice,
        LangItem::SharedArray,
        LangItem::SharedMemory,
        LangItem::ConstantMemory,
        LangItem::TensorMap,
    ];

    /// The value of its `oxide::lang` attribute.
    pub fn name(self) -> &'static str {
        match self {
            LangItem::DisjointSlice => "disjoint_slice",
            LangItem::SharedArray => "shared_array",
            LangItem::SharedMemory => "shared_memory",
            LangItem::ConstantMemory => "constant_memory",
            LangItem::TensorMap => "tensor_map",
        }
    }

    /// Inverse of [`LangItem::name`].
    pub fn from_name(name: &str) -> Option<LangItem> {
        LangItem::ALL.into_iter().find(|l| l.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lang_names_round_trip() {
        for l in LangItem::ALL {
            assert_eq!(LangItem::from_name(l.name()), Some(l));
        }
        assert_eq!(LangItem::from_name("SharedArray"), None);
    }
}
