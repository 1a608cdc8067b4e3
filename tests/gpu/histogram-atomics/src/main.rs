//! GPU test: 256-bin histogram of 4,000,037 random (skewed) bytes: per-block counts with
//! block-scope atomics on a `SharedArray` (`atom.shared`), merged with device-scope atomics into
//! global bins (`atom.global`); the counts must equal the CPU's exactly. A second kernel checks
//! the other operations (min, max, xor, exchange, inc, sub, system scope, f32/f64 add, and a
//! 64-bit add built from compare-and-swap) against exact CPU results.
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{SharedArray, atomic, cuda_module, kernel, launch_bounds, sync_threads, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare};

#[cuda_module]
mod kernels {
    use super::*;

    /// Launched with 256 threads per block: thread `t` owns bin `t` of the block's counts.
    #[kernel]
    #[launch_bounds(256)]
    pub fn histogram(data: &[u8], bins: &mut [u32]) {
        static mut COUNTS: SharedArray<u32, 256> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x() as usize;
        // SAFETY: each thread zeroes its own bin before the barrier.
        unsafe { COUNTS[tid] = 0 };
        sync_threads();
        for i in thread::grid_stride(data.len()) {
            let bin = data[i.get()] as usize;
            // SAFETY: `bin < 256`; every access between the barriers is atomic.
            unsafe { atomic::block::add(&raw mut COUNTS[bin], 1u32) };
        }
        sync_threads();
        let count = unsafe { COUNTS[tid] };
        if count != 0 {
            // SAFETY: `bins` has 256 elements; all threads of the grid update it atomically.
            unsafe { atomic::add(bins.as_mut_ptr().add(tid), count) };
        }
    }

    /// `ints = [min, max, xor, count (system scope), last exchange]`, `words = [sum via CAS,
    /// 2n - n via sub]`, `wrap = [inc modulo 10]`.
    #[kernel]
    pub fn reductions(
        x: &[i32],
        ints: &mut [i32],
        words: &mut [u64],
        wrap: &mut [u32],
        sum64: &mut [f64],
        sum32: &mut [f32],
    ) {
        for i in thread::grid_stride(x.len()) {
            let v = x[i.get()];
            // SAFETY: every buffer is long enough and only accessed atomically while running.
            unsafe {
                let p = ints.as_mut_ptr();
                atomic::min(p, v);
                atomic::max(p.add(1), v);
                atomic::xor(p.add(2), v);
                atomic::system::add(p.add(3), 1);
                atomic::exchange(p.add(4), 7);
                let w = words.as_mut_ptr();
                let mut old = atomic::compare_exchange(w, 0, 0);
                loop {
                    let new = old.wrapping_add(v as i64 as u64);
                    let seen = atomic::compare_exchange(w, old, new);
                    if seen == old {
                        break;
                    }
                    old = seen;
                }
                atomic::sub(w.add(1), 1u64);
                atomic::inc_wrap(wrap.as_mut_ptr(), 9);
                atomic::add(sum64.as_mut_ptr(), v as f64);
                atomic::block::add(sum32.as_mut_ptr(), v.rem_euclid(4) as f32);
            }
        }
    }
}

const N: usize = 4_000_037;
const M: usize = 100_003;

fn main() {
    let mut report = Report::new("histogram-atomics");
    let mut rng = Lcg::from_env_or_clock();
    let (ctx, stream, module) = report.load(kernels::load);

    report.check("histogram", || {
        // Half the bytes fall into 8 bins: heavy contention on a few addresses.
        let data: Vec<u8> = (0..N)
            .map(|_| {
                let r = rng.next_u32();
                if r & 1 == 0 { ((r >> 1) % 8) as u8 * 31 } else { (r >> 8) as u8 }
            })
            .collect();
        let mut expected = vec![0u32; 256];
        for &b in &data {
            expected[b as usize] += 1;
        }

        let data_dev = ck(DeviceBuffer::from_host(&stream, &data), "copy data to the device")?;
        let mut bins_dev = ck(DeviceBuffer::<u32>::zeroed(&stream, 256), "zeroed bins")?;
        let config = LaunchConfig { grid_dim: (ctx.sm_count() * 4, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        ck(module.histogram(&stream, config, &data_dev, &mut bins_dev), "launch histogram")?;
        ck(stream.synchronize(), "synchronize after histogram")?;
        compare("bins", &ck(bins_dev.to_host_vec(&stream), "copy bins to the host")?, &expected, PartialEq::eq)
    });

    report.check("other_atomics", || {
        let x: Vec<i32> = (0..M).map(|_| (rng.next_u32() % 2001) as i32 - 1000).collect();
        let cpu_ints = [
            *x.iter().min().unwrap_or(&0),
            *x.iter().max().unwrap_or(&0),
            x.iter().fold(0, |a, &b| a ^ b),
            M as i32,
            7,
        ];
        let cpu_words = [x.iter().fold(0u64, |a, &b| a.wrapping_add(b as i64 as u64)), M as u64];
        let cpu_wrap = (M % 10) as u32;
        let cpu_sum64: f64 = x.iter().map(|&v| v as f64).sum();
        let cpu_sum32: f32 = x.iter().map(|&v| v.rem_euclid(4) as f32).sum();

        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let mut ints_dev = ck(DeviceBuffer::from_host(&stream, &[i32::MAX, i32::MIN, 0, 0, -1]), "ints")?;
        let mut words_dev = ck(DeviceBuffer::from_host(&stream, &[0u64, 2 * M as u64]), "words")?;
        let mut wrap_dev = ck(DeviceBuffer::from_host(&stream, &[0u32]), "wrap")?;
        let mut sum64_dev = ck(DeviceBuffer::from_host(&stream, &[0f64]), "sum64")?;
        let mut sum32_dev = ck(DeviceBuffer::from_host(&stream, &[0f32]), "sum32")?;
        // One block for sum32, whose adds have block scope.
        let config = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
        ck(
            module.reductions(
                &stream,
                config,
                &x_dev,
                &mut ints_dev,
                &mut words_dev,
                &mut wrap_dev,
                &mut sum64_dev,
                &mut sum32_dev,
            ),
            "launch reductions",
        )?;
        ck(stream.synchronize(), "synchronize after reductions")?;
        let ints = ck(ints_dev.to_host_vec(&stream), "ints back")?;
        let words = ck(words_dev.to_host_vec(&stream), "words back")?;
        let wrap = ck(wrap_dev.to_host_vec(&stream), "wrap back")?;
        let sum64 = ck(sum64_dev.to_host_vec(&stream), "sum64 back")?;
        let sum32 = ck(sum32_dev.to_host_vec(&stream), "sum32 back")?;
        if ints != cpu_ints {
            return Err(format!("[min, max, xor, count, exchange]: gpu {ints:?} cpu {cpu_ints:?}"));
        }
        if words != cpu_words {
            return Err(format!("[cas sum, sub]: gpu {words:?} cpu {cpu_words:?}"));
        }
        if wrap[0] != cpu_wrap {
            return Err(format!("inc_wrap: gpu {} cpu {cpu_wrap}", wrap[0]));
        }
        if sum64[0] != cpu_sum64 || sum32[0] != cpu_sum32 {
            return Err(format!("float adds: gpu {} / {} cpu {cpu_sum64} / {cpu_sum32}", sum64[0], sum32[0]));
        }
        Ok(())
    });

    report.finish()
}
