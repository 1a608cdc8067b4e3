//! GPU test: each block of 256 threads sums its 256 inputs through a `SharedArray` tree reduction
//! (`bar.sync` between the steps); thread 0 writes the block's sum. Random `u32` inputs, a
//! length that leaves a partial last block, output poisoned first; sums compared exactly.
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{SharedArray, cuda_module, kernel, launch_bounds, sync_threads, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    #[launch_bounds(256)]
    pub fn block_sum(x: &[u32], sums: &mut [u32]) {
        static mut PARTIAL: SharedArray<u32, 256> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x() as usize;
        let i = thread::index_1d().get();
        let v = if i < x.len() { x[i] } else { 0 };
        // SAFETY: each thread writes only its own slot before the barrier.
        unsafe { PARTIAL[tid] = v };
        sync_threads();
        let mut stride = 128;
        while stride > 0 {
            if tid < stride {
                // SAFETY: slot `tid` is this thread's; `tid + stride` is written by no one in this step.
                unsafe { PARTIAL[tid] = PARTIAL[tid].wrapping_add(PARTIAL[tid + stride]) };
            }
            sync_threads();
            stride /= 2;
        }
        if tid == 0 {
            sums[thread::blockIdx_x() as usize] = unsafe { PARTIAL[0] };
        }
    }
}

const N: usize = 1_000_003;
const BLOCK: usize = 256;

fn main() {
    let mut report = Report::new("block-reduce");
    let mut rng = Lcg::from_env_or_clock();
    let (_ctx, stream, module) = report.load(kernels::load);

    report.check("block_sums", || {
        let x: Vec<u32> = (0..N).map(|_| rng.next_u32() % 1_000_000).collect();
        let blocks = N.div_ceil(BLOCK);
        let expected: Vec<u32> = x.chunks(BLOCK).map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b))).collect();

        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x to the device")?;
        let mut sums_dev = ck(DeviceBuffer::from_host(&stream, &vec![0xDEAD_BEEFu32; blocks]), "poison sums")?;
        let config =
            LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (BLOCK as u32, 1, 1), shared_mem_bytes: 0 };
        ck(module.block_sum(&stream, config, &x_dev, &mut sums_dev), "launch block_sum")?;
        ck(stream.synchronize(), "synchronize after block_sum")?;
        compare("block sums", &ck(sums_dev.to_host_vec(&stream), "copy sums to the host")?, &expected, PartialEq::eq)
    });

    report.finish()
}
