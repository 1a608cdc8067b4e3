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
    let tcx = cx.tcx;
    let def_id = instance.def_id();
    if !matches!(tcx.crate_name(def_id.krate).as_str(), "std" | "core") {
        return false;
    }
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
