//! Device functions across the Rust ⇄ CUDA C++ boundary (docs/interop.md): the crate's exports
//! (non-generic `#[device]` functions with C types, which CUDA C++ calls by name) and its imports
//! (functions of a `#[device] extern "C"` block, which CUDA C++ sources define), their C
//! declarations, and the C header of the exports.

use oxide_contract::manifest::DeviceFunction;
use rustc_hir::def::DefKind;
use rustc_hir::def_id::DefId;
use rustc_middle::ty::{self, Instance, Ty, TyCtxt};
use rustc_span::Span;

use super::attrs;
use super::errors::{DeviceError, report_at};

/// A device function of this crate that CUDA C++ can call.
pub struct Export<'tcx> {
    pub instance: Instance<'tcx>,
    /// The C name: its `#[no_mangle]`/`#[export_name]` symbol, else the Rust name.
    pub symbol: String,
    pub c_decl: String,
}

impl Export<'_> {
    /// Its manifest record.
    pub fn record(&self, tcx: TyCtxt<'_>) -> DeviceFunction {
        DeviceFunction {
            symbol: self.symbol.clone(),
            name: tcx.def_path_str(self.instance.def_id()),
            c_decl: self.c_decl.clone(),
        }
    }
}

/// The C spelling of a type that crosses the boundary, or `None` when it has no C equivalent
/// whose calling convention is the same on both sides. `bool` is left out on purpose: NVVM
/// passes C++'s `bool` as a byte and Rust's as a 1-bit value, so a call between them would
/// link to a mismatched signature.
fn c_type(ty: Ty<'_>) -> Option<String> {
    use ty::{FloatTy, IntTy, UintTy};
    Some(match ty.kind() {
        ty::Int(IntTy::I8) => "int8_t".into(),
        ty::Int(IntTy::I16) => "int16_t".into(),
        ty::Int(IntTy::I32) => "int32_t".into(),
        ty::Int(IntTy::I64) => "int64_t".into(),
        ty::Int(IntTy::Isize) => "ptrdiff_t".into(),
        ty::Uint(UintTy::U8) => "uint8_t".into(),
        ty::Uint(UintTy::U16) => "uint16_t".into(),
        ty::Uint(UintTy::U32) => "uint32_t".into(),
        ty::Uint(UintTy::U64) => "uint64_t".into(),
        ty::Uint(UintTy::Usize) => "size_t".into(),
        ty::Float(FloatTy::F32) => "float".into(),
        ty::Float(FloatTy::F64) => "double".into(),
        ty::RawPtr(pointee, mutbl) => {
            // A pointer is a pointer: one to a type without a C name is `void*` in the header.
            let inner = c_type(*pointee).unwrap_or_else(|| "void".into());
            if mutbl.is_mut() { format!("{inner}*") } else { format!("const {inner}*") }
        }
        _ => return None,
    })
}

/// A type with no C spelling that makes an exported or imported signature unusable.
pub struct BadType {
    pub position: String,
    pub ty: String,
}

/// `ret name(params)` for the function `def_id` under the C name `symbol`.
pub fn c_decl<'tcx>(tcx: TyCtxt<'tcx>, def_id: DefId, symbol: &str) -> Result<String, BadType> {
    let sig = tcx.instantiate_bound_regions_with_erased(tcx.fn_sig(def_id).instantiate_identity().skip_normalization());
    let names = tcx.fn_arg_idents(def_id);
    let mut params = Vec::new();
    for (i, ty) in sig.inputs().iter().enumerate() {
        let name = names.get(i).copied().flatten().map(|n| n.to_string()).unwrap_or_else(|| format!("arg{i}"));
        let Some(c) = c_type(*ty) else {
            return Err(BadType { position: format!("parameter `{name}`"), ty: ty.to_string() });
        };
        params.push(format!("{c} {name}"));
    }
    let output = sig.output();
    let ret = if output.is_unit() {
        "void".to_string()
    } else {
        c_type(output).ok_or_else(|| BadType { position: "return type".into(), ty: output.to_string() })?
    };
    if sig.c_variadic() {
        return Err(BadType { position: "`...`".into(), ty: "C variadic arguments".into() });
    }
    let params = if params.is_empty() { "void".to_string() } else { params.join(", ") };
    Ok(format!("{ret} {symbol}({params})"))
}

/// `true` for an explicit export: `#[no_mangle]`, `#[export_name]` or `extern "C"`.
fn is_explicit(tcx: TyCtxt<'_>, def_id: DefId) -> bool {
    let abi = tcx.fn_sig(def_id).skip_binder().skip_binder().abi();
    tcx.codegen_fn_attrs(def_id).contains_extern_indicator() || matches!(abi, rustc_abi::ExternAbi::C { .. })
}

/// The crate's exports: its explicit exports (`#[device]` with `#[no_mangle]`, `#[export_name]` or
/// `extern "C"`), and in a crate without kernels (a device library for CUDA C++) also its
/// non-generic `pub` `#[device]` functions whose parameters and result have C types, under their
/// Rust names. An explicit export with another type, or whose name another export or a kernel
/// entry takes, is an error; an implicit one is skipped (with a warning when its name is taken).
/// Helpers of a crate with kernels stay internal, so the optimiser can drop them once inlined.
/// `entries` are the kernels' PTX entry names.
pub fn exports<'tcx>(tcx: TyCtxt<'tcx>, entries: &[String]) -> Vec<Export<'tcx>> {
    let implicit_ok = entries.is_empty();
    let mut out: Vec<Export<'tcx>> = Vec::new();
    let candidates = tcx
        .hir_crate_items(())
        .definitions()
        .map(|d| d.to_def_id())
        .filter(|&d| tcx.def_kind(d) == DefKind::Fn && attrs::is_device(tcx, d) && !is_import(tcx, d))
        .filter(|&d| !tcx.generics_of(d).requires_monomorphization(tcx));
    for def_id in candidates {
        let explicit = is_explicit(tcx, def_id);
        if !explicit && !(implicit_ok && tcx.visibility(def_id).is_public()) {
            continue;
        }
        let instance = Instance::mono(tcx, def_id);
        let symbol =
            if explicit { tcx.symbol_name(instance).name.to_string() } else { tcx.item_name(def_id).to_string() };
        let span = tcx.def_span(def_id);
        let c_decl = match c_decl(tcx, def_id, &symbol) {
            Ok(decl) => decl,
            Err(bad) if explicit => {
                let function = tcx.def_path_str(def_id);
                report_at(tcx, Some(span), DeviceError::ExportType { function, position: bad.position, ty: bad.ty });
                continue;
            }
            Err(_) => continue,
        };
        let clash = out
            .iter()
            .find(|e| e.symbol == symbol)
            .map(|e| tcx.def_path_str(e.instance.def_id()))
            .or_else(|| entries.contains(&symbol).then(|| "a kernel entry".to_string()))
            .or_else(|| oxide_contract::naming::is_reserved_entry_name(&symbol).then(|| "the device runtime".into()));
        if let Some(taken_by) = clash {
            let error = DeviceError::ExportNameTaken { symbol, taken_by };
            if explicit {
                report_at(tcx, Some(span), error);
            } else {
                warn_at(tcx, span, error);
            }
            continue;
        }
        out.push(Export { instance, symbol, c_decl });
    }
    out
}

/// `true` for a function of a `#[device] extern "C"` block: CUDA C++ defines it.
pub fn is_import(tcx: TyCtxt<'_>, def_id: DefId) -> bool {
    attrs::is_device_import(tcx, def_id)
}

/// The manifest record of an imported function, or the error for a type C cannot take (reported
/// at its declaration when that is in this crate, else at `call`).
pub fn import<'tcx>(tcx: TyCtxt<'tcx>, instance: Instance<'tcx>, symbol: &str, call: Span) -> Option<DeviceFunction> {
    let def_id = instance.def_id();
    let name = tcx.def_path_str(def_id);
    match c_decl(tcx, def_id, symbol) {
        Ok(c_decl) => Some(DeviceFunction { symbol: symbol.to_string(), name, c_decl }),
        Err(bad) => {
            let span = if def_id.is_local() { tcx.def_span(def_id) } else { call };
            report_at(tcx, Some(span), DeviceError::ImportType { function: name, position: bad.position, ty: bad.ty });
            None
        }
    }
}

fn warn_at(tcx: TyCtxt<'_>, span: Span, error: DeviceError) {
    let mut diag = tcx.dcx().struct_span_warn(span, error.message());
    if let Some(help) = error.help() {
        diag.help(help);
    }
    diag.emit();
}

/// The C header declaring `exports` for CUDA C++ (`<crate>.h`).
pub fn c_header(crate_name: &str, exports: &[DeviceFunction]) -> String {
    let guard = format!("CUDA_OXIDE_{}_H", crate_name.to_ascii_uppercase());
    let mut out = format!(
        "/* Device functions of the Rust crate `{crate_name}`, for CUDA C++.\n * Generated by cuda-oxide \
         (`cargo oxide build`); do not edit. Link the crate's LTOIR\n * (`{crate_name}.<arch>.ltoir`, from \
         `cargo oxide build --emit ltoir`) with CUDA C++\n * compiled by `nvcc -dc -dlto` (nvJitLink or \
         `nvcc -dlto`). */\n#ifndef {guard}\n#define {guard}\n\n#include <stddef.h>\n\
         #include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n"
    );
    for f in exports {
        out.push_str(&format!("/* {} */\n__device__ {};\n", f.name, f.c_decl));
    }
    out.push_str(&format!("\n#ifdef __cplusplus\n}}\n#endif\n\n#endif /* {guard} */\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_declares_each_export() {
        let f = DeviceFunction {
            symbol: "axpy".into(),
            name: "app::axpy".into(),
            c_decl: "float axpy(float a, const float* x, size_t i)".into(),
        };
        let h = c_header("app", &[f]);
        assert!(h.contains("#ifndef CUDA_OXIDE_APP_H"), "{h}");
        assert!(h.contains("/* app::axpy */\n__device__ float axpy(float a, const float* x, size_t i);\n"), "{h}");
        assert!(h.contains("extern \"C\" {") && h.ends_with("#endif /* CUDA_OXIDE_APP_H */\n"), "{h}");
    }
}
