//! GPU test: vecadd on random inputs of a length that is not a multiple of the block size, output
//! poisoned with NaN first, every element compared with the CPU sum. Exits non-zero on any failure.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(c_elem) = c.get_mut(idx) {
            *c_elem = a[i] + b[i];
        }
    }
}

/// 1,000,003 = 3,907 blocks of 256 and 67 threads of a last, partial block.
const N: usize = 1_000_003;

/// A 64-bit LCG (Knuth's MMIX constants): reproducible inputs without a dependency.
struct Lcg(u64);

impl Lcg {
    fn next_f32(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // 24 high bits → [0, 1), then spread over [-1000, 1000).
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2000.0 - 1000.0
    }
}

fn main() {
    match run() {
        Ok(()) => println!("PASS vecadd-random: {N} elements match the CPU reference"),
        Err(err) => {
            eprintln!("FAIL vecadd-random: {err}");
            std::process::exit(1);
        }
    }
}

fn run() -> Result<(), String> {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    let mut rng = Lcg(seed);
    let a: Vec<f32> = (0..N).map(|_| rng.next_f32()).collect();
    let b: Vec<f32> = (0..N).map(|_| rng.next_f32()).collect();
    let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();

    let ctx = CudaContext::new(0).map_err(|e| format!("CudaContext::new(0): {e}"))?;
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).map_err(|e| format!("kernels::load: {e}"))?;
    let a_dev = DeviceBuffer::from_host(&stream, &a).map_err(|e| format!("copy a to the device: {e}"))?;
    let b_dev = DeviceBuffer::from_host(&stream, &b).map_err(|e| format!("copy b to the device: {e}"))?;
    let mut c_dev = DeviceBuffer::from_host(&stream, &vec![f32::NAN; N]).map_err(|e| format!("poison c: {e}"))?;

    let config = LaunchConfig::for_num_elems(N as u32);
    module.vecadd(&stream, config, &a_dev, &b_dev, &mut c_dev).map_err(|e| format!("launch vecadd: {e}"))?;
    stream.synchronize().map_err(|e| format!("synchronize after vecadd: {e}"))?;
    let c = c_dev.to_host_vec(&stream).map_err(|e| format!("copy c to the host: {e}"))?;

    if c.len() != N {
        return Err(format!("got {} elements back, expected {N}", c.len()));
    }
    let wrong: Vec<usize> = (0..N).filter(|&i| c[i].to_bits() != expected[i].to_bits()).collect();
    if let Some(&first) = wrong.first() {
        return Err(format!(
            "{} of {N} elements differ (seed {seed}); first at {first}: gpu {} cpu {} ({} + {})",
            wrong.len(),
            c[first],
            expected[first],
            a[first],
            b[first]
        ));
    }
    Ok(())
}
