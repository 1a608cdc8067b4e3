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
    fn cpp_warp_sum(x: u32) -> u32;
    fn cpp_warp_ballot(predicate: i32) -> u32;
    fn cpp_store_twice(p: *mut u32, v: u32);
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

/// Per thread: the warp's sum, the warp's ballot of odd inputs, and twice the input (written by
/// C++ through a pointer). Launched with whole warps only (`cpp_warp_*` need all 32 lanes).
#[cuda_module]
mod warp_kernels {
    use super::*;

    #[kernel]
    pub fn warp_ops(
        x: &[u32],
        mut sums: DisjointSlice<u32>,
        mut ballots: DisjointSlice<u32>,
        mut twice: DisjointSlice<u32>,
    ) {
        let idx = thread::index_1d();
        let i = idx.get();
        let v = x[i];
        let sum = unsafe { cpp_warp_sum(v) };
        let ballot = unsafe { cpp_warp_ballot((v & 1) as i32) };
        if let Some(s) = sums.get_mut(idx) {
            *s = sum;
        }
        if let Some(b) = ballots.get_mut(idx) {
            *b = ballot;
        }
        if let Some(t) = twice.get_mut(idx) {
            unsafe { cpp_store_twice(t as *mut u32, v) };
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
    let (ctx, stream, module) = report.load(kernels::load);
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

    report.check("warp_ops", || {
        let warps = 1024;
        let n = warps * 32;
        let module = ck(warp_kernels::load(&ctx), "load warp_kernels")?;
        let x: Vec<u32> = (0..n).map(|_| rng.next_u32() % 1_000_000).collect();
        let mut want_sums = Vec::with_capacity(n);
        let mut want_ballots = Vec::with_capacity(n);
        for warp in x.chunks(32) {
            let sum = warp.iter().fold(0u32, |s, v| s.wrapping_add(*v));
            let ballot = warp.iter().enumerate().fold(0u32, |b, (lane, v)| b | ((v & 1) << lane));
            want_sums.extend([sum; 32]);
            want_ballots.extend([ballot; 32]);
        }
        let want_twice: Vec<u32> = x.iter().map(|v| 2 * v).collect();
        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let poison = vec![0xDEAD_BEEFu32; n];
        let mut sums = ck(DeviceBuffer::from_host(&stream, &poison), "poison sums")?;
        let mut ballots = ck(DeviceBuffer::from_host(&stream, &poison), "poison ballots")?;
        let mut twice = ck(DeviceBuffer::from_host(&stream, &poison), "poison twice")?;
        let config = LaunchConfig::for_num_elems(n as u32);
        ck(module.warp_ops(&stream, config, &x_dev, &mut sums, &mut ballots, &mut twice), "launch warp_ops")?;
        compare("sums", &ck(sums.to_host_vec(&stream), "copy sums")?, &want_sums, |a, b| a == b)?;
        compare("ballots", &ck(ballots.to_host_vec(&stream), "copy ballots")?, &want_ballots, |a, b| a == b)?;
        compare("twice", &ck(twice.to_host_vec(&stream), "copy twice")?, &want_twice, |a, b| a == b)
    });

    report.finish()
}
