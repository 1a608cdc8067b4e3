//! Static shared memory over 48 KB: a user error at the static, with the fix (dynamic shared
//! memory, which the launch opts into), not a failure of ptxas reported as a compiler bug.
use cuda_device::{SharedMemory, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn big(out: &mut [f32]) {
        static TILE: SharedMemory<f32, 16384> = SharedMemory::UNINIT; //~ ERROR static shared memory is limited to 49152 bytes per block
        let t = thread::threadIdx_x() as usize;
        unsafe { TILE.write(t, 1.0) };
        out[t] = unsafe { TILE.read(t) };
    }
}

fn main() {
    let _ = kernels::load;
}
