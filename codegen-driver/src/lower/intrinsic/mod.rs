//! Intrinsics: rustc's own (`core::intrinsics`, called by codegen_ssa) mapped to LLVM intrinsics
//! or libdevice, and ours (`cuda_device::intrinsics`: one file per family, `thread.rs`, `sync.rs`,
//! `atomic.rs`, `warp.rs`, `shared.rs`, `cluster.rs`, `debug.rs`, `arith.rs`, `bounds.rs`, `half.rs`,
//! `async_copy.rs`, `inline_ptx.rs` (`ptx_asm!`), the tensor-core families `mma.rs`, `mbarrier.rs`, `wgmma.rs`, `tma.rs` over
//! `asm.rs`).

mod arith;
mod asm;
mod async_copy;
mod atomic;
mod bounds;
mod cluster;
mod debug;
mod half;
mod inline_ptx;
mod math;
mod mbarrier;
mod mem;
mod mma;
mod shared;
mod sync;
mod thread;
mod tma;
mod warp;
mod wgmma;

pub use atomic::{core_load_store, core_rmw};
pub use shared::shared_static;

pub use math::{define_libm, define_libm_crate_entry};

use rustc_codegen_ssa::mir::operand::OperandRef;
use rustc_codegen_ssa::mir::place::PlaceRef;
use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::{self, Instance};
use rustc_span::Span;

use super::builder::Builder;
use super::context::CodegenCx;
use super::errors::DeviceError;
use super::ir;

/// Gives `instance` its device body when it is a raw device operation (`#[oxide::intrinsic]`, the
/// functions of `cuda_device::intrinsics`); returns `false` for every other instance.
pub fn define_device_intrinsic<'tcx>(cx: &CodegenCx<'tcx>, instance: Instance<'tcx>) -> bool {
    let tcx = cx.tcx;
    let def_id = instance.def_id();
    if !super::attrs::is_intrinsic(tcx, def_id) {
        return false;
    }
    let name = tcx.item_name(def_id);
    let name = name.as_str();
    if let Some(need) = oxide_contract::arch::intrinsic_need(name) {
        cx.ptx_isa_floor.set(cx.ptx_isa_floor.get().max(need.min_ptx_isa()));
        let mut lacking: Vec<String> = Vec::new();
        for &arch in cx.archs.iter().filter(|a| !need.met_by(**a)) {
            // A plain arch whose arch-specific variant has the instruction is built as that
            // variant (NVIDIA's toolchain picks `sm_90a` for wgmma the same way); the build says so.
            match arch.arch_specific_variant().filter(|v| need.met_by(*v)) {
                Some(variant) => {
                    let mut upgrades = cx.arch_upgrades.borrow_mut();
                    if !upgrades.iter().any(|(from, _, _)| *from == arch) {
                        upgrades.push((arch, variant, name.to_string()));
                    }
                }
                None => lacking.push(arch.to_string()),
            }
        }
        if !lacking.is_empty() {
            let op = name.to_string();
            super::errors::report(cx, DeviceError::NeedsArch { op, need: need.to_string(), archs: lacking.join(", ") });
        }
    }
    let f = cx.get_fn(instance);
    let start = Builder::append_block(cx, f, "start");
    let mut bx = Builder::build(cx, start);
    let done = thread::build(&mut bx, name)
        || sync::build(&mut bx, name)
        || atomic::build(&mut bx, name, instance)
        || bounds::build(&mut bx, name, instance)
        || warp::build(&mut bx, name)
        || shared::build(&mut bx, name, instance)
        || cluster::build(&mut bx, name)
        || debug::build(&mut bx, name, instance)
        || arith::build(&mut bx, name)
        || half::build(&mut bx, name)
        || async_copy::build(&mut bx, name)
        || mma::build(&mut bx, name)
        || mbarrier::build(&mut bx, name, instance)
        || wgmma::build(&mut bx, name, instance)
        || tma::build(&mut bx, name)
        || inline_ptx::build(&mut bx, name, instance)
        // `#[unroll]`'s marker: its calls are dropped (`loop_hints.rs`); the body is empty.
        || (name == "loop_unroll" && {
            bx.ret_void();
            true
        });
    if !done {
        // A function in `intrinsics` without a device body is our bug, not the user's.
        rustc_middle::bug!("cuda-oxide: `cuda_device::intrinsics::{name}` has no device implementation");
    }
    true
}

/// libdevice's name for a float math intrinsic that PTX has no instruction for.
fn libdevice_name(intrinsic: &str) -> Option<&'static str> {
    Some(match intrinsic {
        "sinf32" => "__nv_sinf",
        "sinf64" => "__nv_sin",
        "cosf32" => "__nv_cosf",
        "cosf64" => "__nv_cos",
        "expf32" => "__nv_expf",
        "expf64" => "__nv_exp",
        "exp2f32" => "__nv_exp2f",
        "exp2f64" => "__nv_exp2",
        "logf32" => "__nv_logf",
        "logf64" => "__nv_log",
        "log2f32" => "__nv_log2f",
        "log2f64" => "__nv_log2",
        "log10f32" => "__nv_log10f",
        "log10f64" => "__nv_log10",
        "powf32" => "__nv_powf",
        "powf64" => "__nv_pow",
        "powif32" => "__nv_powif",
        "powif64" => "__nv_powi",
        _ => return None,
    })
}

/// An LLVM intrinsic overloaded on the first argument's type, for rustc's float intrinsics
/// (`floorf32`, `round_ties_even_f64`, `fabs`, `minimum_number_nsz_f32`, …).
fn llvm_float_name(intrinsic: &str) -> Option<&'static str> {
    let base = ["_f16", "_f32", "_f64", "_f128", "f16", "f32", "f64", "f128"]
        .iter()
        .find_map(|suffix| intrinsic.strip_suffix(suffix))
        .unwrap_or(intrinsic);
    Some(match base {
        "sqrt" => "sqrt",
        "fabs" => "fabs",
        "floor" => "floor",
        "ceil" => "ceil",
        "trunc" => "trunc",
        "round" => "round",
        "rint" | "nearbyint" | "round_ties_even" => "roundeven",
        "copysign" => "copysign",
        "minnum" | "minimum_number_nsz" => "minnum",
        "maxnum" | "maximum_number_nsz" => "maxnum",
        "minimum" => "minimum",
        "maximum" => "maximum",
        "fma" => "fma",
        "fmuladd" => "fmuladd",
        _ => return None,
    })
}

impl<'a, 'tcx> IntrinsicCallBuilderMethods<'tcx> for Builder<'a, 'tcx> {
    fn codegen_intrinsic_call(
        &mut self,
        instance: Instance<'tcx>,
        args: &[OperandRef<'tcx, ir::Value>],
        result: PlaceRef<'tcx, ir::Value>,
        _span: Span,
    ) -> Result<(), Instance<'tcx>> {
        let tcx = self.cx.tcx;
        let name = tcx.item_name(instance.def_id());
        let name = name.as_str();
        let imm: Vec<ir::Value> = args.iter().filter(|a| !a.layout.is_zst()).map(|a| a.immediate()).collect();
        let ret_ty = self.cx.immediate_backend_type(result.layout);
        let arg_ty = |i: usize| self.cx.val_ty(imm[i]);

        let fast = self.cx.fast.get();
        let val = if let Some(nv) = libdevice_name(name) {
            let nv = if fast { math::fast_variant(nv).unwrap_or(nv) } else { nv };
            self.call_named(nv, ret_ty, &imm)
        } else if fast && matches!(name, "sqrtf32") {
            // `afn`: NVPTX's `sqrt.approx.f32` (and `rsqrt.approx.f32` for `1.0 / x.sqrt()`).
            let f = self.cx.type_f32();
            let sig = self.cx.type_func(&[f], f);
            self.cx.declare_raw_fn("llvm.sqrt.f32", sig);
            self.emit_value(f, format!("call afn float @llvm.sqrt.f32({})", self.cx.operand(imm[0])))
        } else if let Some(base) = llvm_float_name(name) {
            let t = arg_ty(0);
            self.call_intrinsic(base, &[t], ret_ty, &imm)
        } else {
            match name {
                "ctpop" | "bswap" | "bitreverse" => {
                    let t = arg_ty(0);
                    if name == "bswap" && self.cx.int_width(t) == 8 {
                        imm[0]
                    } else {
                        let r = self.call_intrinsic(name, &[t], t, &imm);
                        self.intcast(r, ret_ty, false)
                    }
                }
                "ctlz" | "ctlz_nonzero" | "cttz" | "cttz_nonzero" => {
                    let t = arg_ty(0);
                    let nonzero = self.cx.const_bool(name.ends_with("_nonzero"));
                    let base = if name.starts_with("ctlz") { "ctlz" } else { "cttz" };
                    let r = self.call_intrinsic(base, &[t], t, &[imm[0], nonzero]);
                    self.intcast(r, ret_ty, false)
                }
                "saturating_add" | "saturating_sub" => {
                    let signed = args[0].layout.ty.is_signed();
                    let op = if name == "saturating_add" { "add" } else { "sub" };
                    let base = format!("{}{op}.sat", if signed { 's' } else { 'u' });
                    let t = arg_ty(0);
                    self.call_intrinsic(&base, &[t], t, &imm)
                }
                "unchecked_funnel_shl" | "unchecked_funnel_shr" => {
                    let t = arg_ty(0);
                    let shift = self.intcast(imm[2], t, false);
                    let base = if name.ends_with("shl") { "fshl" } else { "fshr" };
                    self.call_intrinsic(base, &[t], t, &[imm[0], imm[1], shift])
                }
                "carrying_mul_add" => {
                    let (size, signed) = instance.args.type_at(0).int_size_and_signed(tcx);
                    let wide = self.cx.type_ix(size.bits() * 2);
                    let narrow = self.cx.type_ix(size.bits());
                    let w: Vec<ir::Value> = imm.iter().map(|&a| self.intcast(a, wide, signed)).collect();
                    let prod = self.mul(w[0], w[1]);
                    let acc = self.add(prod, w[2]);
                    let full = self.add(acc, w[3]);
                    let low = self.trunc(full, narrow);
                    let bits = self.cx.const_uint(wide, size.bits());
                    let high = self.lshr(full, bits);
                    let high = self.trunc(high, narrow);
                    let pair_ty = self.cx.type_struct(&[narrow, narrow], false);
                    let pair = self.cx.const_poison(pair_ty);
                    let pair = self.insert_value(pair, low, 0);
                    self.insert_value(pair, high, 1)
                }
                "abort" => {
                    self.abort();
                    return Ok(());
                }
                "black_box" => {
                    args[0].val.store(self, result);
                    return Ok(());
                }
                "ptr_mask" => {
                    let p = arg_ty(0);
                    let isize = self.cx.type_isize();
                    self.call_intrinsic("ptrmask", &[p, isize], p, &imm)
                }
                "volatile_load" | "unaligned_volatile_load" => {
                    // `ptr::read_volatile`: `ld.volatile` (codegen_ssa does the stores itself).
                    let ty = self.cx.backend_type(result.layout);
                    let align = if name == "volatile_load" { result.layout.align.abi.bytes() } else { 1 };
                    let text =
                        format!("load volatile {}, {}, align {align}", self.cx.type_str(ty), self.cx.operand(imm[0]));
                    let load = self.emit_value(ty, text);
                    if !result.layout.is_zst() {
                        self.store_to_place(load, result.val);
                    }
                    return Ok(());
                }
                "compare_bytes" => mem::compare_bytes(self, imm[0], imm[1], imm[2]),
                "raw_eq" => mem::raw_eq(self, instance.args.type_at(0), imm[0], imm[1]),
                _ if tcx.intrinsic(instance.def_id()).is_some_and(|i| i.must_be_overridden) => {
                    // No fallback body to compile: a user-facing error, not codegen_ssa's ICE.
                    let simd = name.starts_with("simd_");
                    let key =
                        ("intrinsic", self.cx.current.get().map(|i| i.def_id()), (!simd).then(|| instance.def_id()));
                    if self.cx.reports.first(key) {
                        super::errors::report(
                            self.cx,
                            DeviceError::IntrinsicUnsupported { name: name.to_string(), simd },
                        );
                    }
                    self.cx.reports.failed.set(true);
                    return Ok(());
                }
                _ => return Err(ty::Instance::new_raw(instance.def_id(), instance.args)),
            }
        };
        if result.layout.ty.is_bool() {
            let v = self.from_immediate(val);
            self.store_to_place(v, result.val);
        } else if !result.layout.ty.is_unit() && !result.layout.is_zst() {
            self.store_to_place(val, result.val);
        }
        Ok(())
    }

    fn codegen_llvm_intrinsic_call(
        &mut self,
        instance: Instance<'tcx>,
        _args: &[OperandRef<'tcx, ir::Value>],
        _is_cleanup: bool,
    ) -> ir::Value {
        let name = self.cx.tcx.def_path_str(instance.def_id());
        super::errors::report(self.cx, DeviceError::HostLlvmIntrinsic { name });
        self.cx.const_poison(self.cx.type_i8())
    }

    fn abort(&mut self) {
        let void = self.cx.type_void();
        self.call_named("llvm.trap", void, &[]);
    }

    fn assume(&mut self, val: ir::Value) {
        let void = self.cx.type_void();
        self.call_named("llvm.assume", void, &[val]);
    }

    fn expect(&mut self, cond: ir::Value, expected: bool) -> ir::Value {
        // `likely` / `unlikely`: branch weights for LLVM's block placement.
        let i1 = self.cx.type_i1();
        let e = self.cx.const_bool(expected);
        self.call_named("llvm.expect.i1", i1, &[cond, e])
    }

    fn type_checked_load(&mut self, _vtable: ir::Value, _off: u64, _typeid: &[u8]) -> ir::Value {
        super::errors::report(self.cx, DeviceError::DynTrait { what: None });
        self.cx.const_poison(self.cx.type_ptr())
    }

    fn va_start(&mut self, v: ir::Value) -> ir::Value {
        super::errors::report(self.cx, DeviceError::CVariadicFunction);
        v
    }

    fn va_end(&mut self, v: ir::Value) -> ir::Value {
        v
    }

    fn retag_mem(&mut self, _place: ir::Value, _info: &rustc_codegen_ssa::RetagInfo<ir::Value>) {}

    fn retag_reg(&mut self, ptr: ir::Value, _info: &rustc_codegen_ssa::RetagInfo<ir::Value>) -> ir::Value {
        ptr
    }
}
