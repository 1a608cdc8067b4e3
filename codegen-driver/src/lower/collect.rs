//! Finding the kernel instances a crate compiles: functions marked `#[oxide::kernel]` (emitted by
//! `#[kernel]`), their instances among the crate's mono items, their keys, entry names and launch
//! attributes.

use oxide_contract::launch_contract::LaunchContract;
use oxide_contract::manifest::LaunchBounds;
use oxide_contract::naming;
use rustc_data_structures::fx::FxHashMap;
use rustc_hir::def::DefKind;
use rustc_hir::def_id::DefId;
use rustc_middle::mono::MonoItem;
use rustc_middle::ty::{Instance, InstanceKind, Ty, TyCtxt};
use rustc_span::Symbol;

use super::attrs;

pub struct KernelRoot<'tcx> {
    pub instance: Instance<'tcx>,
    /// The instance's key (`oxide_contract::naming::kernel_key`).
    pub key: u64,
    /// The PTX entry name (`oxide_contract::naming::entry_name`).
    pub entry: String,
    pub launch_bounds: Option<LaunchBounds>,
    pub cluster_dims: Option<[u32; 3]>,
    pub cooperative: bool,
    pub launch_contract: Option<LaunchContract>,
}

/// `true` when a crate can hold kernels or instances of them: when `cuda_device` is among the
/// crates it links (directly or through a library of kernels), or it is `cuda_device` itself.
pub fn may_have_kernels(tcx: TyCtxt<'_>) -> bool {
    tcx.crates(()).iter().any(|&c| tcx.crate_name(c).as_str() == CUDA_DEVICE)
}

/// The crate whose lang items and intrinsics the backend knows.
const CUDA_DEVICE: &str = "cuda_device";

/// The kernel instances this crate compiles: its non-generic kernels, and every instance of a
/// generic kernel (its own or another crate's) that this crate's host code names: the generated
/// launch methods take the instance's address, so it is among this crate's mono items. Whoever
/// codegens the host instance compiles its device code, so each instance is in some bundle.
pub fn kernels(tcx: TyCtxt<'_>) -> Vec<KernelRoot<'_>> {
    if !may_have_kernels(tcx) && tcx.crate_name(rustc_hir::def_id::LOCAL_CRATE).as_str() != CUDA_DEVICE {
        return Vec::new();
    }
    let local: Vec<DefId> = tcx
        .hir_crate_items(())
        .definitions()
        .map(|d| d.to_def_id())
        .filter(|&d| matches!(tcx.def_kind(d), DefKind::Fn | DefKind::AssocFn) && attrs::is_kernel(tcx, d))
        .collect();
    let mut instances: Vec<Instance<'_>> = local
        .iter()
        .filter(|&&d| !tcx.generics_of(d).requires_monomorphization(tcx))
        .map(|&d| Instance::mono(tcx, d))
        .collect();
    let mut is_kernel: FxHashMap<DefId, bool> = local.iter().map(|&d| (d, true)).collect();
    let partitions = tcx.collect_and_partition_mono_items(());
    for cgu in partitions.codegen_units {
        for item in cgu.items().keys() {
            if let MonoItem::Fn(instance) = item
                && matches!(instance.def, InstanceKind::Item(_))
                && !instance.args.is_empty()
                && *is_kernel.entry(instance.def_id()).or_insert_with(|| attrs::is_kernel(tcx, instance.def_id()))
                && !instances.contains(instance)
            {
                instances.push(*instance);
            }
        }
    }
    // A plain entry name must name one kernel of this bundle.
    let mut base_uses: FxHashMap<Symbol, usize> = FxHashMap::default();
    for instance in &instances {
        *base_uses.entry(tcx.item_name(instance.def_id())).or_default() += 1;
    }
    let mut roots: Vec<KernelRoot<'_>> = instances
        .into_iter()
        .map(|instance| {
            let def_id = instance.def_id();
            let base = tcx.item_name(def_id);
            let key = kernel_key(tcx, instance);
            let plain =
                instance.args.is_empty() && base_uses[&base] == 1 && !naming::is_reserved_entry_name(base.as_str());
            let launch_bounds = attrs::launch_bounds(tcx, def_id)
                .map(|(max_threads, min_blocks)| LaunchBounds { max_threads, min_blocks });
            KernelRoot {
                instance,
                key,
                entry: naming::entry_name(base.as_str(), key, plain),
                launch_bounds,
                cluster_dims: attrs::cluster_dims(tcx, def_id),
                cooperative: attrs::is_cooperative(tcx, def_id),
                launch_contract: attrs::launch_contract(tcx, def_id),
            }
        })
        .collect();
    roots.sort_by(|a, b| a.entry.cmp(&b.entry));
    roots
}

/// The instance's key: the type-id bits of its function item type, which the host computes with
/// `oxide_contract::naming::kernel_key(&kernel::<..>)` (see there).
fn kernel_key<'tcx>(tcx: TyCtxt<'tcx>, instance: Instance<'tcx>) -> u64 {
    let fn_item = Ty::new_fn_def(tcx, instance.def_id(), instance.args);
    naming::key_from_type_id_hash(tcx.type_id_hash(fn_item).as_u128())
}
