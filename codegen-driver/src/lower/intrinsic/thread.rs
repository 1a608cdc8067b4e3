//! Thread, block and grid registers: `%tid`, `%ntid`, `%ctaid`, `%nctaid`, `%laneid`, `%warpid`,
//! `%lanemask_*`, `%smid`, `%nsmid`, `%dynamic_smem_size`.

use rustc_codegen_ssa::traits::*;

use super::super::builder::Builder;

/// Builds the body of the register intrinsic `name`; `false` if `name` is not one.
pub fn build(bx: &mut Builder<'_, '_>, name: &str) -> bool {
    let (reg, axis) = match name.split_once('_') {
        Some(("threadIdx", a)) => ("tid", a),
        Some(("blockIdx", a)) => ("ctaid", a),
        Some(("blockDim", a)) => ("ntid", a),
        Some(("gridDim", a)) => ("nctaid", a),
        _ => match name {
            "laneid" => ("laneid", ""),
            "warpid" => ("warpid", ""),
            "smid" => ("smid", ""),
            "nsmid" => ("nsmid", ""),
            "lanemask_lt" => ("lanemask.lt", ""),
            "lanemask_le" => ("lanemask.le", ""),
            "lanemask_eq" => ("lanemask.eq", ""),
            "lanemask_gt" => ("lanemask.gt", ""),
            "lanemask_ge" => ("lanemask.ge", ""),
            "dynamic_smem_size" => {
                // No LLVM intrinsic reads this register: inline PTX.
                let i32t = bx.cx.type_i32();
                let v = bx.emit_value(i32t, "call i32 asm \"mov.u32 $0, %dynamic_smem_size;\", \"=r\"()".into());
                bx.ret(v);
                return true;
            }
            _ => return false,
        },
    };
    if !matches!(axis, "" | "x" | "y" | "z") {
        return false;
    }
    let sreg = if axis.is_empty() {
        format!("llvm.nvvm.read.ptx.sreg.{reg}")
    } else {
        format!("llvm.nvvm.read.ptx.sreg.{reg}.{axis}")
    };
    let i32t = bx.cx.type_i32();
    let v = bx.call_named(&sreg, i32t, &[]);
    bx.ret(v);
    true
}
