//! GPU test: each block of 256 threads sums its 256 inputs through a `SharedArray` tree reduction
//! (`bar.sync` between the steps); thread 0 writes the block's sum. Random `u32` inputs, a
//! length that leaves a partial last block, output poisoned first; sums compared exactly.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{SharedArray, cuda_module, kernel, launch_bounds, sync_threads, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    #[launch_bounds(256)]
    pub fn block_sum(x: &[u32], sums: &mut [u32]) {
        static PARTIAL: SharedArray<u32, 256> = SharedArray::new();
        let tid = thread::threadIdx_x() as usize;
        let i = thread::index_1d().get();
        let v = if i < x.len() { x[i] } else { 0 };
        // SAFETY: each thread writes only its own slot before the barrier.
        unsafe { PARTIAL.write(tid, v) };
        sync_threads();
        let mut stride = 128;
        while stride > 0 {
            if tid < stride {
                // SAFETY: slot `tid` is this thread's; `tid + stride` is written by no one in this step.
                unsafe { PARTIAL.write(tid, PARTIAL.read(tid).wrapping_add(PARTIAL.read(tid + stride))) };
            }
            sync_threads();
            stride /= 2;
        }
        if tid == 0 {
            sums[thread::blockIdx_x() as usize] = unsafe { PARTIAL.read(0) };
        }
    }
}

const N: usize = 1_000_003;
const BLOCK: usize = 256;

struct Lcg(u64);

impl Lcg {
    fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

fn main() {
    match run() {
        Ok(blocks) => println!("PASS block-reduce: {blocks} block sums match the CPU reference"),
        Err(err) => {
            eprintln!("FAIL block-reduce: {err}");
            std::process::exit(1);
        }
    }
}

fn run() -> Result<usize, String> {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    let mut rng = Lcg(seed);
    let x: Vec<u32> = (0..N).map(|_| rng.next_u32() % 1_000_000).collect();
    let blocks = N.div_ceil(BLOCK);
    let expected: Vec<u32> =
        x.chunks(BLOCK).map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b))).collect();

    let ctx = CudaContext::new(0).map_err(|e| format!("CudaContext::new(0): {e}"))?;
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).map_err(|e| format!("kernels::load: {e}"))?;
    let x_dev = DeviceBuffer::from_host(&stream, &x).map_err(|e| format!("copy x to the device: {e}"))?;
    let mut sums_dev = DeviceBuffer::from_host(&stream, &vec![0xDEAD_BEEFu32; blocks]).map_err(|e| format!("poison sums: {e}"))?;

    let config = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (BLOCK as u32, 1, 1), shared_mem_bytes: 0 };
    module.block_sum(&stream, config, &x_dev, &mut sums_dev).map_err(|e| format!("launch block_sum: {e}"))?;
    stream.synchronize().map_err(|e| format!("synchronize after block_sum: {e}"))?;
    let sums = sums_dev.to_host_vec(&stream).map_err(|e| format!("copy sums to the host: {e}"))?;

    let wrong: Vec<usize> = (0..blocks).filter(|&b| sums[b] != expected[b]).collect();
    if let Some(&first) = wrong.first() {
        return Err(format!(
            "{} of {blocks} block sums differ (seed {seed}); first at block {first}: gpu {} cpu {}",
            wrong.len(),
            sums[first],
            expected[first]
        ));
    }
    Ok(blocks)
}
