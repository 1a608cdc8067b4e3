//! `ptx_asm!`: the body of `intrinsics::ptx_asm::<Site, In, Out>(ins, outs)`, one per statement.
//! `Site`'s constants (`cuda_device::inline_ptx`) give the template and the constraints in CUDA
//! C++'s form, which this file translates to an LLVM `asm` call: `%N` → `$M` (LLVM numbers the
//! outputs, then the register inputs, then the inputs tied to `inout` outputs), `%%` → `%`,
//! `$` → `$$`; `"n"` and `"C"` operands are written into the text. Register inputs are loaded
//! from the tuple `*ins`, outputs stored to the tuple `*outs`.

use rustc_codegen_ssa::traits::*;
use rustc_middle::mir::ConstValue;
use rustc_middle::ty::{self, Instance, Ty, TyCtxt};
use rustc_span::DUMMY_SP;
use rustc_span::def_id::DefId;

use super::super::builder::Builder;
use super::super::errors::DeviceError;
use super::super::ir::{self, TypeData};

/// One operand as written: `=r` → (Out, 'r'), `+l` → (InOut, 'l'), `C` → (In, 'C').
#[derive(Clone, Copy, PartialEq)]
enum Role {
    Out,
    InOut,
    In,
}

/// Builds `ptx_asm`; `false` for every other name.
pub fn build<'tcx>(bx: &mut Builder<'_, 'tcx>, name: &str, instance: Instance<'tcx>) -> bool {
    if name != "ptx_asm" {
        return false;
    }
    let tcx = bx.cx.tcx;
    bx.cx.user_ptx.set(true);
    let site = instance.args.type_at(0);
    let (site_trait, const_trait) = traits(tcx, instance.def_id());
    let site_args = tcx.mk_args(&[site.into()]);
    let text = |item: &str| -> String {
        let value = assoc_const(tcx, site_trait, item, site_args);
        let bytes = value.try_get_slice_bytes_for_diagnostics(tcx).expect("a &str constant");
        String::from_utf8_lossy(bytes).into_owned()
    };
    let (template, operands, options) = (text("TEMPLATE"), text("OPERANDS"), text("OPTIONS"));
    let options: Vec<&str> = options.split(',').collect();
    let operands: Vec<(Role, char)> = operands
        .split(',')
        .filter(|o| !o.is_empty())
        .map(|o| match o.as_bytes() {
            [b'=', c] => (Role::Out, *c as char),
            [b'+', c] => (Role::InOut, *c as char),
            [c] => (Role::In, *c as char),
            _ => rustc_middle::bug!("cuda-oxide: ptx_asm! operand `{o}`"),
        })
        .collect();

    // LLVM's operand numbers and the text of constant operands.
    let outputs: Vec<char> = operands.iter().filter(|(r, _)| *r != Role::In).map(|&(_, c)| c).collect();
    let explicit: Vec<char> =
        operands.iter().filter(|&&(r, c)| r == Role::In && c != 'C' && c != 'n').map(|&(_, c)| c).collect();
    let mut substitute: Vec<String> = Vec::new();
    let (mut next_out, mut next_in) = (0, outputs.len());
    for (k, &(role, class)) in operands.iter().enumerate() {
        let k_arg = || -> ty::GenericArgsRef<'tcx> {
            tcx.mk_args(&[site.into(), ty::Const::from_target_usize(tcx, k as u64).into()])
        };
        substitute.push(match (role, class) {
            (Role::In, 'C') => {
                let value = assoc_const(tcx, const_trait, "BYTES", k_arg());
                let bytes = value.try_get_slice_bytes_for_diagnostics(tcx).unwrap_or(&[]);
                let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
                String::from_utf8_lossy(&bytes[..end]).replace('$', "$$")
            }
            (Role::In, 'n') => {
                let value = assoc_const(tcx, const_trait, "VALUE", k_arg());
                value.try_to_scalar_int().map_or(0, |v| v.to_i64()).to_string()
            }
            (Role::In, _) => {
                next_in += 1;
                format!("${}", next_in - 1)
            }
            _ => {
                next_out += 1;
                format!("${}", next_out - 1)
            }
        });
    }
    let asm_text = translate(&template, &substitute);

    // The registers' LLVM types, and the operand values converted to them.
    let in_layout = bx.cx.layout_of(instance.args.type_at(1));
    let out_layout = bx.cx.layout_of(instance.args.type_at(2));
    let (ins, outs) = (bx.get_param(0), bx.get_param(1));
    let inouts: Vec<char> = operands.iter().filter(|(r, _)| *r == Role::InOut).map(|&(_, c)| c).collect();
    let mut constraints: Vec<String> = outputs.iter().map(|c| format!("={c}")).collect();
    constraints.extend(explicit.iter().map(|c| c.to_string()));
    let mut args = Vec::new();
    let in_classes: Vec<char> = explicit.iter().chain(inouts.iter()).copied().collect();
    for (i, &class) in in_classes.iter().enumerate() {
        let field = in_layout.field(bx.cx, i);
        let at = field_ptr(bx, ins, in_layout.fields.offset(i).bytes());
        let ty = bx.cx.immediate_backend_type(field);
        let v = bx.load(ty, at, field.align.abi);
        let Some(v) = to_register(bx, v, class, field.ty) else { return give_up(bx) };
        args.push(v);
    }
    // The inputs tied to the `inout` outputs: the output's number as the constraint.
    let mut j = 0;
    for (out_index, &(role, _)) in operands.iter().filter(|(r, _)| *r != Role::In).enumerate() {
        if role == Role::InOut {
            constraints.push(out_index.to_string());
            j += 1;
        }
    }
    debug_assert_eq!(j, inouts.len());
    let register_only = options.contains(&"register_only");
    if options.contains(&"memory") {
        constraints.push("~{memory}".into());
    }
    let out_types: Vec<ir::Type> = outputs.iter().map(|&c| register_type(bx, c)).collect();
    let ret = match out_types.as_slice() {
        [] => None,
        [t] => Some(*t),
        many => Some(bx.cx.type_struct(many, false)),
    };
    let call = format!(
        "asm {}\"{}\", \"{}\"({}){}",
        if register_only { "" } else { "sideeffect " },
        ir_escape(&asm_text),
        constraints.join(","),
        args.iter().map(|&a| bx.cx.operand(a)).collect::<Vec<_>>().join(", "),
        if options.contains(&"may_diverge") { "" } else { " convergent" },
    );
    match ret {
        None => bx.emit(format!("call void {call}")),
        Some(t) => {
            let ts = bx.cx.type_str(t);
            let result = bx.emit_value(t, format!("call {ts} {call}"));
            for (i, &class) in outputs.iter().enumerate() {
                let v = if outputs.len() == 1 { result } else { bx.extract_value(result, i as u64) };
                let field = out_layout.field(bx.cx, i);
                let Some(v) = from_register(bx, v, class, field.ty) else { return give_up(bx) };
                let at = field_ptr(bx, outs, out_layout.fields.offset(i).bytes());
                bx.store(v, at, field.align.abi);
            }
        }
    }
    bx.ret_void();
    true
}

/// `cuda_device::inline_ptx::{PtxAsmSite, PtxAsmConst}`: the bound of `ptx_asm`'s first type
/// parameter, and its sibling.
fn traits(tcx: TyCtxt<'_>, intrinsic: DefId) -> (DefId, DefId) {
    let site = tcx
        .predicates_of(intrinsic)
        .predicates
        .iter()
        .filter_map(|(clause, _)| clause.as_trait_clause())
        .map(|t| t.def_id())
        .find(|&t| tcx.item_name(t).as_str() == "PtxAsmSite")
        .expect("ptx_asm's bound S: PtxAsmSite");
    let konst = tcx
        .module_children(tcx.parent(site))
        .iter()
        .filter_map(|c| c.res.opt_def_id())
        .find(|&d| tcx.item_name(d).as_str() == "PtxAsmConst")
        .expect("cuda_device::inline_ptx::PtxAsmConst");
    (site, konst)
}

/// The value of the associated constant `item` of `trait_id` for `args` (`Self` first).
fn assoc_const<'tcx>(tcx: TyCtxt<'tcx>, trait_id: DefId, item: &str, args: ty::GenericArgsRef<'tcx>) -> ConstValue {
    let def = tcx
        .associated_items(trait_id)
        .in_definition_order()
        .find(|i| i.name().as_str() == item)
        .map(|i| i.def_id)
        .expect("an associated constant of cuda_device::inline_ptx");
    let uv = rustc_middle::mir::UnevaluatedConst::new(def, args);
    match tcx.const_eval_resolve(ty::TypingEnv::fully_monomorphized(), uv, DUMMY_SP) {
        Ok(v) => v,
        // The const evaluator has reported it at the user's expression (a `"C"` operand that is
        // not a constant, say); what is built here is never used.
        Err(_) => ConstValue::ZeroSized,
    }
}

/// The template with `%N` replaced by `substitute[N]`, `%%` by `%` and `$` by `$$`.
fn translate(template: &str, substitute: &[String]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' => out.push_str("$$"),
            '%' if chars.peek() == Some(&'%') => {
                chars.next();
                out.push('%');
            }
            '%' if chars.peek().is_some_and(char::is_ascii_digit) => {
                let mut n = 0usize;
                while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                    n = n * 10 + d as usize;
                    chars.next();
                }
                out.push_str(substitute.get(n).map_or("", String::as_str));
            }
            c => out.push(c),
        }
    }
    out
}

/// Escapes `s` for a string of LLVM IR text.
fn ir_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b == b'"' || b == b'\\' || !(0x20..0x7f).contains(&b) {
            out.push_str(&format!("\\{b:02X}"));
        } else {
            out.push(b as char);
        }
    }
    out
}

/// The LLVM type of a register of constraint `class`.
fn register_type(bx: &mut Builder<'_, '_>, class: char) -> ir::Type {
    match class {
        'h' => bx.cx.type_i16(),
        'r' => bx.cx.type_i32(),
        'l' => bx.cx.type_i64(),
        'q' => bx.cx.type_i128(),
        'f' => bx.cx.type_f32(),
        'd' => bx.cx.type_f64(),
        _ => rustc_middle::bug!("cuda-oxide: ptx_asm! register class `{class}`"),
    }
}

fn bits(bx: &Builder<'_, '_>, t: ir::Type) -> Option<u64> {
    Some(match bx.cx.type_data(t) {
        TypeData::Int(n) => n as u64,
        TypeData::Half | TypeData::BFloat => 16,
        TypeData::Float => 32,
        TypeData::Double => 64,
        TypeData::Fp128 => 128,
        TypeData::Ptr(_) => 64,
        _ => return None,
    })
}

/// `v` (of the Rust type `ty`) as a value of a `class` register: the same bits, pointers as
/// integers; an error at the `ptx_asm!` when the sizes differ.
fn to_register<'tcx>(bx: &mut Builder<'_, 'tcx>, v: ir::Value, class: char, ty: Ty<'tcx>) -> Option<ir::Value> {
    let reg = register_type(bx, class);
    let from = bx.cx.val_ty(v);
    if from == reg {
        return Some(v);
    }
    check_size(bx, from, reg, class, ty)?;
    Some(match bx.cx.type_data(from) {
        TypeData::Ptr(_) => bx.ptrtoint(v, reg),
        _ => bx.bitcast(v, reg),
    })
}

/// The output register `v` as a value of the Rust type `ty`.
fn from_register<'tcx>(bx: &mut Builder<'_, 'tcx>, v: ir::Value, class: char, ty: Ty<'tcx>) -> Option<ir::Value> {
    let layout = bx.cx.layout_of(ty);
    let to = bx.cx.immediate_backend_type(layout);
    let reg = bx.cx.val_ty(v);
    if to == reg {
        return Some(v);
    }
    check_size(bx, to, reg, class, ty)?;
    Some(match bx.cx.type_data(to) {
        TypeData::Ptr(_) => bx.inttoptr(v, to),
        _ => bx.bitcast(v, to),
    })
}

fn check_size<'tcx>(bx: &Builder<'_, 'tcx>, rust: ir::Type, reg: ir::Type, class: char, ty: Ty<'tcx>) -> Option<u64> {
    let need = bits(bx, reg).unwrap_or(0);
    match bits(bx, rust) {
        Some(have) if have == need && !matches!(bx.cx.type_data(rust), TypeData::Int(1)) => Some(have),
        _ => {
            super::super::errors::report(
                bx.cx,
                DeviceError::PtxAsmOperand { ty: ty.to_string(), constraint: class, bits: need },
            );
            None
        }
    }
}

/// Ends the body after an error was reported (nothing built here is used then).
fn give_up(bx: &mut Builder<'_, '_>) -> bool {
    bx.unreachable();
    true
}

/// The address `offset` bytes into the tuple at `base`.
fn field_ptr(bx: &mut Builder<'_, '_>, base: ir::Value, offset: u64) -> ir::Value {
    if offset == 0 {
        return base;
    }
    let i8t = bx.cx.type_i8();
    let off = bx.cx.const_usize(offset);
    bx.inbounds_gep(i8t, base, &[off])
}
