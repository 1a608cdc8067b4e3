//! A tensor map passed by value is grid-constant: the kernel reads it in parameter memory, so a
//! body that writes it is refused at the parameter.
use cuda_device::tma::TensorMap;
use cuda_device::{cuda_module, kernel};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn rewrite(mut map: TensorMap, out: &mut [u64]) { //~ ERROR is grid-constant and cannot be written
        map.opaque[0] = 0;
        out[0] = map.opaque[1];
    }
}

fn main() {
    let _ = kernels::load;
}
