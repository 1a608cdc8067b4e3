//! A `ptx_asm!` operand whose type does not fit its register: `r` holds 32 bits, not a `u64`.
use cuda_device::{DisjointSlice, cuda_module, kernel, ptx_asm, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn wide_in_r(mut out: DisjointSlice<u64>) {
        let idx = thread::index_1d();
        let x = idx.get() as u64;
        let y: u64;
        unsafe { ptx_asm!("mov.b64 %0, %1;", out("=l") y, in("r") x) }; //~ ERROR cannot use the constraint `r`
        if let Some(o) = out.get_mut(idx) {
            *o = y;
        }
    }
}

fn main() {
    let _ = kernels::load;
}
