//! Finding the crate's kernels: functions marked `#[oxide::kernel]` (emitted by `#[kernel]`), each
//! monomorphic instance of them, and their launch attributes.

use oxide_format::manifest::LaunchBounds;
use rustc_hir::def::DefKind;
use rustc_hir::def_id::DefId;
use rustc_middle::mono::MonoItem;
use rustc_middle::ty::{Instance, TyCtxt};
use rustc_span::Symbol;

pub struct KernelRoot<'tcx> {
    pub instance: Instance<'tcx>,
    /// The PTX entry name (see `oxide_format::naming`).
    pub entry: String,
    pub launch_bounds: Option<LaunchBounds>,
    pub cluster_dims: Option<[u32; 3]>,
}

fn tool_attr<'tcx>(tcx: TyCtxt<'tcx>, def_id: DefId, name: &str) -> Option<&'tcx rustc_hir::Attribute> {
    tcx.get_attrs_by_path(def_id, &[Symbol::intern("oxide"), Symbol::intern(name)]).next()
}

/// The integer arguments of `#[oxide::name(a, b, …)]`.
fn int_args(tcx: TyCtxt<'_>, def_id: DefId, name: &str) -> Option<Vec<u32>> {
    let attr = tool_attr(tcx, def_id, name)?;
    let items = attr.meta_item_list()?;
    Some(
        items
            .iter()
            .filter_map(|i| i.lit().and_then(|l| l.symbol.as_str().parse::<u32>().ok()))
            .collect(),
    )
}

pub fn is_kernel(tcx: TyCtxt<'_>, def_id: DefId) -> bool {
    tool_attr(tcx, def_id, "kernel").is_some()
}

pub fn kernels(tcx: TyCtxt<'_>) -> Vec<KernelRoot<'_>> {
    let mut roots = Vec::new();
    let marked: Vec<DefId> = tcx
        .hir_crate_items(())
        .definitions()
        .map(|d| d.to_def_id())
        .filter(|&d| matches!(tcx.def_kind(d), DefKind::Fn | DefKind::AssocFn) && is_kernel(tcx, d))
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
        // Same bits as `oxide_format::naming::type_key::<T>()` on the host (see there).
        let type_keys: Vec<u64> =
            instance.args.types().map(|t| (tcx.type_id_hash(t).as_u128() >> 64) as u64).collect();
        let launch_bounds = int_args(tcx, def_id, "launch_bounds").and_then(|v| {
            Some(LaunchBounds { max_threads: *v.first()?, min_blocks: v.get(1).copied() })
        });
        let cluster_dims = int_args(tcx, def_id, "cluster_launch").map(|v| {
            [v.first().copied().unwrap_or(1), v.get(1).copied().unwrap_or(1), v.get(2).copied().unwrap_or(1)]
        });
        roots.push(KernelRoot {
            instance,
            entry: oxide_format::naming::entry_name(&base, &type_keys),
            launch_bounds,
            cluster_dims,
        });
    }
    roots.sort_by(|a, b| a.entry.cmp(&b.entry));
    roots
}
