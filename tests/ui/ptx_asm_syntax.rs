//! `ptx_asm!` syntax errors, reported by the macro at the offending token: an unescaped PTX
//! register, a constraint PTX has no register for, an output after an input.
use cuda_device::{DisjointSlice, cuda_module, kernel, ptx_asm, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn bad_asm(mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let x = idx.get() as u32;
        let (a, b, c): (u32, u32, u32);
        unsafe {
            ptx_asm!("mov.u32 %0, %laneid;", out("=r") a); //~ ERROR must be escaped as `%%laneid`
            ptx_asm!("mov.u32 %0, %1;", out("=r") b, in("x") x); //~ ERROR unsupported `in` constraint `x`
            ptx_asm!("mov.u32 %0, %1;", in("r") x, out("=r") c); //~ ERROR outputs (`out`, `inout`) must come before the inputs
        }
        if let Some(o) = out.get_mut(idx) {
            *o = a + b + c;
        }
    }
}

fn main() {
    let _ = kernels::load;
}
