//! GPU test: Rust kernels calling CUDA C++ device functions (`src/ops.cu`, named in Cargo.toml's
//! `cuda-sources`), random inputs, outputs poisoned first, compared with a CPU reference.
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, device, kernel, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, same_bits_f32};

#[device]
unsafe extern "C" {
    fn cpp_axpb(x: f32, a: f32, b: f32) -> f32;
    fn cpp_mix(x: u32, salt: u32) -> u32;
    fn cpp_sum(p: *const f32, n: u32) -> f32;
}

/// Elements of each row that `row_sums` adds up.
const ROW: usize = 8;

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn axpb(x: &[f32], a: f32, b: f32, mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = unsafe { cpp_axpb(x[i], a, b) };
        }
    }

    #[kernel]
    pub fn mix(x: &[u32], salt: u32, mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = unsafe { cpp_mix(x[i], salt) };
        }
    }

    #[kernel]
    pub fn row_sums(x: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            let row = &x[i * ROW..(i + 1) * ROW];
            *o = unsafe { cpp_sum(row.as_ptr(), ROW as u32) };
        }
    }
}

fn cpu_mix(x: u32, salt: u32) -> u32 {
    let mut x = x ^ salt;
    x = x.wrapping_mul(0x9E37_79B1);
    x ^= x >> 15;
    x.wrapping_add(7)
}

const N: usize = 100_003;

fn main() {
    let mut report = Report::new("interop-rust-calls-cpp");
    let mut rng = Lcg::from_env_or_clock();
    let (_ctx, stream, module) = report.load(kernels::load);
    let config = LaunchConfig::for_num_elems(N as u32);

    report.check("axpb", || {
        let x = rng.vec_f32(N);
        let (a, b) = (rng.next_f32(), rng.next_f32());
        let want: Vec<f32> = x.iter().map(|v| v.mul_add(a, b)).collect();
        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![f32::NAN; N]), "poison out")?;
        ck(module.axpb(&stream, config, &x_dev, a, b, &mut out), "launch axpb")?;
        compare("axpb", &ck(out.to_host_vec(&stream), "copy out")?, &want, same_bits_f32)
    });

    report.check("mix", || {
        let x: Vec<u32> = (0..N).map(|_| rng.next_u32()).collect();
        let salt = rng.next_u32();
        let want: Vec<u32> = x.iter().map(|&v| cpu_mix(v, salt)).collect();
        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![0xDEAD_BEEFu32; N]), "poison out")?;
        ck(module.mix(&stream, config, &x_dev, salt, &mut out), "launch mix")?;
        compare("mix", &ck(out.to_host_vec(&stream), "copy out")?, &want, |a, b| a == b)
    });

    report.check("row_sums", || {
        let rows = N / ROW;
        let x = rng.vec_f32(rows * ROW);
        // The same order of additions as the C++ loop: bit-exact.
        let want: Vec<f32> = x.chunks(ROW).map(|r| r.iter().fold(0.0f32, |s, v| s + v)).collect();
        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![f32::NAN; rows]), "poison out")?;
        let config = LaunchConfig::for_num_elems(rows as u32);
        ck(module.row_sums(&stream, config, &x_dev, &mut out), "launch row_sums")?;
        compare("row_sums", &ck(out.to_host_vec(&stream), "copy out")?, &want, same_bits_f32)
    });

    report.finish()
}
