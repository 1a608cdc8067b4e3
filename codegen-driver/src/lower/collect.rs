//! Finding the crate's kernels: functions marked `#[oxide::kernel]` (emitted by `#[kernel]`), each
//! monomorphic instance of them, and their launch attributes.

use oxide_contract::manifest::LaunchBounds;
use rustc_hir::def::DefKind;
use rustc_hir::def_id::DefId;
use rustc_middle::mono::MonoItem;
use rustc_middle::ty::{Instance, TyCtxt};

use super::attrs;

pub struct KernelRoot<'tcx> {
    pub instance: Instance<'tcx>,
    /// The PTX entry name (see `oxide_contract::naming`).
    pub entry: String,
    pub launch_bounds: Option<LaunchBounds>,
    pub cluster_dims: Option<[u32; 3]>,
}

pub fn kernels(tcx: TyCtxt<'_>) -> Vec<KernelRoot<'_>> {
    let mut roots = Vec::new();
    let marked: Vec<DefId> = tcx
        .hir_crate_items(())
        .definitions()
        .map(|d| d.to_def_id())
        .filter(|&d| matches!(tcx.def_kind(d), DefKind::Fn | DefKind::AssocFn) && attrs::is_kernel(tcx, d))
        .collect();
    if marked.is_empty() {
        return roots;
    }
    let mut instances = Vec::new();
    for &def_id in &marked {
        if !tcx.generics_of(def_id).requires_monomorphization(tcx) {
            instances.push(Instance::mono(tcx, def_id));
        }
    }
    // Generic kernels exist only as the instances the host code names (the generated launch
    // methods take their address), so they are among this crate's mono items.
    let partitions = tcx.collect_and_partition_mono_items(());
    for cgu in partitions.codegen_units {
        for item in cgu.items().keys() {
            if let MonoItem::Fn(instance) = item
                && marked.contains(&instance.def_id())
                && !instance.args.is_empty()
                && !instances.contains(instance)
            {
                instances.push(*instance);
            }
        }
    }
    for instance in instances {
        let def_id = instance.def_id();
        let base = tcx.item_name(def_id).to_string();
        // Same bits as `oxide_contract::naming::type_key::<T>()` on the host (see there).
        let type_keys: Vec<u64> = instance.args.types().map(|t| (tcx.type_id_hash(t).as_u128() >> 64) as u64).collect();
        let launch_bounds =
            attrs::launch_bounds(tcx, def_id).map(|(max_threads, min_blocks)| LaunchBounds { max_threads, min_blocks });
        let cluster_dims = attrs::cluster_dims(tcx, def_id);
        roots.push(KernelRoot {
            instance,
            entry: oxide_contract::naming::entry_name(&base, &type_keys),
            launch_bounds,
            cluster_dims,
        });
    }
    roots.sort_by(|a, b| a.entry.cmp(&b.entry));
    roots
}
