//! GPU test: vecadd on random inputs of a length that is not a multiple of the block size, output
//! poisoned with NaN first, every element compared with the CPU sum. Exits non-zero on any failure.
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, same_bits_f32};

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

fn main() {
    let mut report = Report::new("vecadd-random");
    let mut rng = Lcg::from_env_or_clock();
    let (_ctx, stream, module) = report.load(kernels::load);

    report.check("vecadd", || {
        let (a, b) = (rng.vec_f32(N), rng.vec_f32(N));
        let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();

        let a_dev = ck(DeviceBuffer::from_host(&stream, &a), "copy a to the device")?;
        let b_dev = ck(DeviceBuffer::from_host(&stream, &b), "copy b to the device")?;
        let mut c_dev = ck(DeviceBuffer::from_host(&stream, &vec![f32::NAN; N]), "poison c")?;
        let config = LaunchConfig::for_num_elems(N as u32);
        ck(module.vecadd(&stream, config, &a_dev, &b_dev, &mut c_dev), "launch vecadd")?;
        ck(stream.synchronize(), "synchronize after vecadd")?;
        compare("c", &ck(c_dev.to_host_vec(&stream), "copy c to the host")?, &expected, same_bits_f32)
    });

    report.finish()
}
