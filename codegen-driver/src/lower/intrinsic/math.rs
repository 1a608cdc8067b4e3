//! The C math library (`std`'s `cmath` bindings and `core`'s libm port) mapped to libdevice.

use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::Instance;

use super::super::builder::Builder;
use super::super::context::CodegenCx;

/// libm functions that libdevice provides under `__nv_<name>` (f64) and `__nv_<name>f` (f32).
const LIBM: &[&str] = &[
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cbrt",
    "cos",
    "cosh",
    "erf",
    "erfc",
    "exp",
    "exp10",
    "exp2",
    "expm1",
    "fdim",
    "fma",
    "fmod",
    "hypot",
    "log",
    "log10",
    "log1p",
    "log2",
    "pow",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "tgamma",
    "lgamma",
    "j0",
    "j1",
    "y0",
    "y1",
    "nextafter",
    "remainder",
    "fmax",
    "fmin",
    "logb",
    "rint",
    "round",
    "trunc",
    "floor",
    "ceil",
];

/// Gives a bodiless libm function of `std`/`core` a body that calls libdevice; `false` otherwise.
pub fn define_libm<'tcx>(cx: &CodegenCx<'tcx>, instance: Instance<'tcx>) -> bool {
    let def_id = instance.def_id();
    matches!(cx.tcx.crate_name(def_id.krate).as_str(), "std" | "core") && define_as_libdevice(cx, instance)
}

/// Gives a public function of the `libm` crate (`libm::powf`, …, what `no_std` code such as glam's
/// `nostd-libm` calls) that libdevice also has a body calling libdevice instead of libm's
/// software implementation: that one is slower on the GPU, and some of its paths are inline
/// assembly for the host (x86 `sqrtsd`). `false` for anything else, `libm`'s own helpers included.
pub fn define_libm_crate_entry<'tcx>(cx: &CodegenCx<'tcx>, instance: Instance<'tcx>) -> bool {
    let tcx = cx.tcx;
    let rustc_middle::ty::InstanceKind::Item(def_id) = instance.def else { return false };
    if def_id.is_local() || tcx.crate_name(def_id.krate).as_str() != "libm" {
        return false;
    }
    // Only the names the crate exports at its root (`pub use math::*`).
    let exported = tcx.module_children(def_id.krate.as_def_id()).iter().any(|c| c.res.opt_def_id() == Some(def_id));
    exported && define_as_libdevice(cx, instance)
}

/// Defines `instance` as a call of `__nv_<its name>` when that is a libdevice function of floats.
fn define_as_libdevice<'tcx>(cx: &CodegenCx<'tcx>, instance: Instance<'tcx>) -> bool {
    let tcx = cx.tcx;
    let def_id = instance.def_id();
    let name = tcx.item_name(def_id);
    let name = name.as_str();
    let base = name.strip_suffix('f').filter(|b| LIBM.contains(b)).unwrap_or(name);
    if !LIBM.contains(&base) {
        return false;
    }
    let f = cx.get_fn(instance);
    let sig = cx.sig_of(cx.func_sig(f));
    let float = |t| matches!(cx.type_data(t), super::super::ir::TypeData::Float | super::super::ir::TypeData::Double);
    if !float(sig.ret) || !sig.params.iter().all(|&p| float(p)) {
        return false;
    }
    let start = Builder::append_block(cx, f, "start");
    let mut bx = Builder::build(cx, start);
    let args: Vec<_> = (0..sig.params.len()).map(|i| bx.get_param(i)).collect();
    let nv = format!("__nv_{name}");
    let nv = if cx.fast.get() { fast_variant(&nv).map(str::to_string).unwrap_or(nv) } else { nv };
    let r = bx.call_named(&nv, sig.ret, &args);
    bx.ret(r);
    true
}

/// Under fast math: libdevice's approximate version of an `f32` function (`__nv_fast_expf`, the
/// `__expf` of nvcc's `--use_fast_math`), where it has one.
pub fn fast_variant(libdevice: &str) -> Option<&'static str> {
    Some(match libdevice {
        "__nv_expf" => "__nv_fast_expf",
        "__nv_exp10f" => "__nv_fast_exp10f",
        "__nv_logf" => "__nv_fast_logf",
        "__nv_log2f" => "__nv_fast_log2f",
        "__nv_log10f" => "__nv_fast_log10f",
        "__nv_powf" => "__nv_fast_powf",
        "__nv_sinf" => "__nv_fast_sinf",
        "__nv_cosf" => "__nv_fast_cosf",
        "__nv_tanf" => "__nv_fast_tanf",
        _ => return None,
    })
}
