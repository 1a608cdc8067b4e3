//! A kernel whose by-value parameters exceed the PTX parameter space (32,764 bytes).
use cuda_device::{cuda_module, kernel};

#[derive(Clone, Copy)]
pub struct Table {
    pub values: [u32; 9000],
}

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn lookup(table: Table, out: &mut [u32]) { //~ ERROR may take at most 32764 bytes
        out[0] = table.values[0];
    }
}

fn main() {
    let _ = kernels::load;
}
