//! Reading our tool attributes (contract §2): kernels and their launch options, the lang items
//! and intrinsics of `cuda_device`. Everything the backend knows about special items it learns
//! here, from attributes, never from paths.

use oxide_contract::abi::LaunchArg;
use oxide_contract::attrs::{self, LangItem};
use oxide_contract::launch_contract::LaunchContract;
use rustc_hir::def_id::DefId;
use rustc_middle::ty::TyCtxt;
use rustc_span::Symbol;

/// `#[oxide::<name>..]` on `def_id`, if present.
fn tool_attr<'tcx>(tcx: TyCtxt<'tcx>, def_id: DefId, name: &str) -> Option<&'tcx rustc_hir::Attribute> {
    tcx.get_attrs_by_path(def_id, &[Symbol::intern(attrs::TOOL), Symbol::intern(name)]).next()
}

/// The integer arguments of `#[oxide::name(a, b, …)]`.
fn int_args(tcx: TyCtxt<'_>, def_id: DefId, name: &str) -> Option<Vec<u32>> {
    let items = tool_attr(tcx, def_id, name)?.meta_item_list()?;
    Some(items.iter().filter_map(|i| i.lit().and_then(|l| l.symbol.as_str().parse::<u32>().ok())).collect())
}

/// `true` for a function marked `#[kernel]`.
pub fn is_kernel(tcx: TyCtxt<'_>, def_id: DefId) -> bool {
    tool_attr(tcx, def_id, attrs::KERNEL).is_some()
}

/// What `#[kernel]` decided the host passes for each parameter (`oxide::kernel(buffer, value)`).
/// `None` for an argument the macro did not write (a hand-written attribute).
pub fn kernel_launch_args(tcx: TyCtxt<'_>, def_id: DefId) -> Vec<Option<LaunchArg>> {
    let Some(items) = tool_attr(tcx, def_id, attrs::KERNEL).and_then(|a| a.meta_item_list()) else {
        return Vec::new();
    };
    items.iter().map(|i| i.ident().and_then(|id| LaunchArg::from_name(id.as_str()))).collect()
}

/// `#[launch_bounds(max_threads[, min_blocks])]`.
pub fn launch_bounds(tcx: TyCtxt<'_>, def_id: DefId) -> Option<(u32, Option<u32>)> {
    let v = int_args(tcx, def_id, attrs::LAUNCH_BOUNDS)?;
    Some((*v.first()?, v.get(1).copied()))
}

/// `#[cluster_launch(x, y, z)]`, missing dimensions being 1.
pub fn cluster_dims(tcx: TyCtxt<'_>, def_id: DefId) -> Option<[u32; 3]> {
    let v = int_args(tcx, def_id, attrs::CLUSTER_LAUNCH)?;
    Some([0, 1, 2].map(|i| v.get(i).copied().unwrap_or(1)))
}

/// `#[cooperative_launch]`.
pub fn is_cooperative(tcx: TyCtxt<'_>, def_id: DefId) -> bool {
    tool_attr(tcx, def_id, attrs::COOPERATIVE_LAUNCH).is_some()
}

/// `#[launch_contract(..)]`, as `#[kernel]` wrote it (`LaunchContract::to_attr_args`).
pub fn launch_contract(tcx: TyCtxt<'_>, def_id: DefId) -> Option<LaunchContract> {
    LaunchContract::from_attr_args(&int_args(tcx, def_id, attrs::LAUNCH_CONTRACT)?)
}

/// The lang item `def_id` is (`#[oxide::lang = "…"]` on an item of `cuda_device` or `cuda_core`).
pub fn lang_item(tcx: TyCtxt<'_>, def_id: DefId) -> Option<LangItem> {
    let attr = tool_attr(tcx, def_id, attrs::LANG)?;
    let name = attr.value_str()?;
    match LangItem::from_name(name.as_str()) {
        Some(item) => Some(item),
        None => rustc_middle::bug!("cuda-oxide: `{}` names an unknown lang item `{name}`", tcx.def_path_str(def_id)),
    }
}

/// `true` for a function marked `#[fast_math]`.
pub fn is_fast_math(tcx: TyCtxt<'_>, def_id: DefId) -> bool {
    tool_attr(tcx, def_id, attrs::FAST_MATH).is_some()
}

/// `true` for a raw device operation (`#[oxide::intrinsic]`), whose body the backend supplies.
pub fn is_intrinsic(tcx: TyCtxt<'_>, def_id: DefId) -> bool {
    tool_attr(tcx, def_id, attrs::INTRINSIC).is_some()
}

/// `true` for the Rust stand-in of a function declared in a `#[device] extern "C"` block.
pub fn is_device_import(tcx: TyCtxt<'_>, def_id: DefId) -> bool {
    tool_attr(tcx, def_id, attrs::DEVICE_IMPORT).is_some()
}

/// `true` for a function marked `#[device]`.
pub fn is_device(tcx: TyCtxt<'_>, def_id: DefId) -> bool {
    tool_attr(tcx, def_id, attrs::DEVICE).is_some()
}
