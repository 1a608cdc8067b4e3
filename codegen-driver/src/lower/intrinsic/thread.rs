//! Thread, block and grid registers: `%tid`, `%ntid`, `%ctaid`, `%nctaid`, `%laneid`, `%warpid`,
//! `%nwarpid`, `%lanemask_*`, `%smid`, `%nsmid`, `%gridid`, `%envreg1`/`%envreg2`,
//! `%dynamic_smem_size`, `%total_smem_size`.

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
            "nwarpid" => ("nwarpid", ""),
            "envreg1" => ("envreg1", ""),
            "envreg2" => ("envreg2", ""),
            "smid" => ("smid", ""),
            "nsmid" => ("nsmid", ""),
            "lanemask_lt" => ("lanemask.lt", ""),
            "lanemask_le" => ("lanemask.le", ""),
            "lanemask_eq" => ("lanemask.eq", ""),
            "lanemask_gt" => ("lanemask.gt", ""),
            "lanemask_ge" => ("lanemask.ge", ""),
            "dynamic_smem_size" | "total_smem_size" => {
                // No LLVM intrinsic reads `%dynamic_smem_size` (LLVM's `total_smem_size` one is
                // not in every LLVM we accept): inline PTX for both.
                let i32t = bx.cx.type_i32();
                let v = bx.emit_value(i32t, format!("call i32 asm \"mov.u32 $0, %{name};\", \"=r\"()"));
                bx.ret(v);
                return true;
            }
            "gridid" => {
                // `%gridid` is 64 bits wide; LLVM's intrinsic reads only 32 of them.
                let i64t = bx.cx.type_i64();
                let v = bx.emit_value(i64t, "call i64 asm \"mov.u64 $0, %gridid;\", \"=l\"()".into());
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
