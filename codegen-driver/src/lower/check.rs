//! Checks of the kernels before lowering: that the archs of the build support each kernel's
//! launch attributes, and that `#[kernel]`'s reading of each parameter (by syntax) agrees with
//! the kernel ABI's (by type). All problems of the crate are reported in one run.

use oxide_contract::arch::{Arch, CLUSTER_MIN_SM};
use rustc_middle::ty::{self, TyCtxt};

use super::attrs;
use super::collect::KernelRoot;
use super::entry::param_kind;
use super::errors::{DeviceError, report_at};

/// `true` when every kernel passed every check.
pub fn kernels<'tcx>(tcx: TyCtxt<'tcx>, kernels: &[KernelRoot<'tcx>], archs: &[Arch]) -> bool {
    let mut ok = true;
    for k in kernels {
        ok &= cluster_archs(tcx, k, archs);
        ok &= launch_args(tcx, k);
    }
    ok
}

/// Thread block clusters exist from sm_90 on: a `#[cluster_launch]` kernel built for an older
/// arch is an error at the kernel.
fn cluster_archs(tcx: TyCtxt<'_>, k: &KernelRoot<'_>, archs: &[Arch]) -> bool {
    let old: Vec<String> = archs.iter().filter(|a| !a.has_clusters()).map(|a| a.to_string()).collect();
    if old.is_empty() || k.cluster_dims.is_none() {
        return true;
    }
    let def_id = k.instance.def_id();
    let kernel = tcx.item_name(def_id).to_string();
    let error = DeviceError::ClusterNeedsNewerArch { kernel, min_sm: CLUSTER_MIN_SM, archs: old.join(", ") };
    report_at(tcx, Some(tcx.def_span(def_id)), error);
    false
}

/// The launch methods push what `#[kernel]` read from the signature; the PTX entry takes what
/// the types say. They differ when a type alias hides a slice or a `DisjointSlice`, say.
fn launch_args<'tcx>(tcx: TyCtxt<'tcx>, k: &KernelRoot<'tcx>) -> bool {
    let def_id = k.instance.def_id();
    let from_macro = attrs::kernel_launch_args(tcx, def_id);
    let env = ty::TypingEnv::fully_monomorphized();
    // The same view of the parameters as the entry point's (`entry::define`).
    let Ok(fn_abi) = tcx.fn_abi_of_instance(env.as_query_input((k.instance, ty::List::empty()))) else {
        return true; // reported when the kernel is lowered
    };
    let idents = tcx.fn_arg_idents(def_id);
    let mut ok = true;
    for (i, (arg, read)) in fn_abi.args.iter().zip(from_macro).enumerate() {
        let Some(read) = read else { continue };
        let (ty, layout) = (arg.layout.ty, arg.layout);
        let kind = param_kind(tcx, ty, layout.is_zst());
        if kind.launch_arg() == read {
            continue;
        }
        let ident = idents.get(i).copied().flatten();
        let span = ident.map_or_else(|| tcx.def_span(def_id), |id| id.span);
        let error = DeviceError::LaunchArgMismatch {
            param: ident.map_or_else(|| format!("#{i}"), |id| id.to_string()),
            ty: ty.to_string(),
            read,
            actual: kind.launch_arg(),
        };
        report_at(tcx, Some(span), error);
        ok = false;
    }
    ok
}
