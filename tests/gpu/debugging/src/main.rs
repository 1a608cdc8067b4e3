//! GPU test of source-level debugging (issue 13). Without arguments it checks the kernels that
//! the debugging tools are pointed at against the CPU (so `run.sh` passes it like any test). With
//! one argument it launches a planted bug for `check.sh`, which runs it under compute-sanitizer
//! and cuda-gdb and looks for the lines marked `// MARK: <tag>` below in their reports:
//!   oob                a raw-pointer write one element past the buffer (memcheck)
//!   race               a shared-memory read of a slot another warp writes, no barrier (racecheck)
//!   divergent-barrier  `sync_threads()` reached by 16 of a block's 64 threads (synccheck)
//!   debug-target       `weighted_sum` once, for a cuda-gdb breakpoint in its loop
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, SharedMemory, cuda_module, kernel, sync_threads, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, same_bits_f32};

const BLOCK: usize = 256;
const TAPS: usize = 4;

#[cuda_module]
mod kernels {
    use super::*;

    /// `out[i] = Σ a[i + k] * w[k]` over the taps that fit: a loop with a local to print.
    #[kernel]
    pub fn weighted_sum(a: &[f32], w: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let mut running_total = 0.0f32;
        let mut k = 0;
        while k < w.len() && i + k < a.len() {
            running_total += a[i + k] * w[k]; // MARK: debug-loop
            k += 1;
        }
        if let Some(o) = out.get_mut(idx) {
            *o = running_total;
        }
    }

    /// Writes `data[i] = 2 i` for `i <= n`: one past the end when more than `n` threads run
    /// (the planted off-by-one; exactly `n` threads are correct).
    #[kernel]
    pub fn fill_raw(data: *mut f32, n: usize) {
        let i = thread::index_1d().get();
        if i <= n {
            // SAFETY: planted bug: only `i < n` is in the buffer.
            unsafe { *data.add(i) = 2.0 * i as f32 }; // MARK: oob-write
        }
    }

    /// `out[i] = input[i + 1]` within each block, through shared memory; `barrier` false plants
    /// the missing `sync_threads()` between the write and the read of a neighbour's slot.
    #[kernel]
    pub fn shift_left(input: &[f32], mut out: DisjointSlice<f32>, barrier: bool) {
        static S: SharedMemory<f32, BLOCK> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let idx = thread::index_1d();
        let v = if idx.get() < input.len() { input[idx.get()] } else { 0.0 };
        // SAFETY: each thread writes its own slot.
        unsafe { S.write(t, v) }; // MARK: race-write
        if barrier {
            sync_threads();
        }
        // SAFETY: in bounds; ordered only when `barrier` is set (else the planted race).
        let next = unsafe { S.read((t + 1) % BLOCK) }; // MARK: race-read
        if let Some(o) = out.get_mut(idx) {
            *o = next;
        }
    }

    /// A barrier that only half of the first warp reaches, and no thread of the second (the
    /// planted bug).
    #[kernel]
    pub fn divergent_barrier(mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        if thread::threadIdx_x() < 16 {
            sync_threads(); // MARK: divergent-barrier
        }
        if let Some(o) = out.get_mut(idx) {
            *o = 1.0;
        }
    }
}

fn main() {
    let mode = std::env::args().nth(1);
    let mut report = Report::new("debugging");
    let mut rng = Lcg::from_env_or_clock();
    let (_ctx, s, m) = report.load(kernels::load);
    let n = 64 * BLOCK;

    match mode.as_deref() {
        None => {}
        Some("debug-target") => {
            report.check("debug_target", || {
                let a = rng.vec_f32(n);
                let w = rng.vec_f32(TAPS);
                let (ad, wd) =
                    (ck(DeviceBuffer::from_host(&s, &a), "copy a")?, ck(DeviceBuffer::from_host(&s, &w), "copy w")?);
                let mut od = ck(DeviceBuffer::<f32>::zeroed(&s, n), "alloc out")?;
                ck(
                    m.weighted_sum(&s, LaunchConfig::for_num_elems(n as u32), &ad, &wd, &mut od),
                    "launch weighted_sum",
                )?;
                ck(s.synchronize(), "synchronize")
            });
            report.finish()
        }
        Some("oob") => {
            report.check("planted_oob_write", || {
                let d = ck(DeviceBuffer::<f32>::zeroed(&s, n), "alloc data")?;
                let cfg = LaunchConfig::for_num_elems((n + BLOCK) as u32);
                ck(m.fill_raw(&s, cfg, d.as_device_ptr() as *mut f32, n), "launch fill_raw")?;
                // Without a sanitizer the write may land in padding; either outcome is the plant.
                let _ = s.synchronize();
                Ok(())
            });
            report.finish()
        }
        Some("race") => {
            report.check("planted_shared_race", || {
                let x = rng.vec_f32(n);
                let xd = ck(DeviceBuffer::from_host(&s, &x), "copy x")?;
                let mut od = ck(DeviceBuffer::<f32>::zeroed(&s, n), "alloc out")?;
                ck(m.shift_left(&s, LaunchConfig::for_num_elems(n as u32), &xd, &mut od, false), "launch shift_left")?;
                ck(s.synchronize(), "synchronize")
            });
            report.finish()
        }
        Some("divergent-barrier") => {
            report.check("planted_divergent_barrier", || {
                let mut od = ck(DeviceBuffer::<f32>::zeroed(&s, 64), "alloc out")?;
                let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (64, 1, 1), shared_mem_bytes: 0 };
                ck(m.divergent_barrier(&s, cfg, &mut od), "launch divergent_barrier")?;
                let _ = s.synchronize();
                Ok(())
            });
            report.finish()
        }
        Some(other) => {
            eprintln!("unknown mode `{other}`; modes: oob, race, divergent-barrier, debug-target (none: the checks)");
            std::process::exit(2)
        }
    }

    report.check("weighted_sum", || {
        let a = rng.vec_f32(n + 7);
        let w = rng.vec_f32(TAPS);
        let (ad, wd) = (ck(DeviceBuffer::from_host(&s, &a), "copy a")?, ck(DeviceBuffer::from_host(&s, &w), "copy w")?);
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; n + 7]), "poison out")?;
        ck(m.weighted_sum(&s, LaunchConfig::for_num_elems((n + 7) as u32), &ad, &wd, &mut od), "launch weighted_sum")?;
        let want: Vec<f32> = (0..n + 7)
            .map(|i| {
                let mut acc = 0.0f32;
                for k in 0..TAPS.min(n + 7 - i) {
                    acc = a[i + k].mul_add(w[k], acc);
                }
                acc
            })
            .collect();
        // The device contracts `acc + a*w` into an FMA, like `mul_add` here; allow for the order.
        let close = |g: &f32, w: &f32| (g - w).abs() <= 1e-5 * (1.0 + w.abs());
        compare("weighted_sum", &ck(od.to_host_vec(&s), "copy out")?, &want, close)
    });

    report.check("fill_raw_exact_grid", || {
        let d = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; n]), "poison data")?;
        ck(m.fill_raw(&s, LaunchConfig::for_num_elems(n as u32), d.as_device_ptr() as *mut f32, n), "launch fill_raw")?;
        ck(s.synchronize(), "synchronize")?;
        let want: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
        compare("fill_raw", &ck(d.to_host_vec(&s), "copy data")?, &want, same_bits_f32)
    });

    report.check("shift_left_with_barrier", || {
        let x = rng.vec_f32(n);
        let xd = ck(DeviceBuffer::from_host(&s, &x), "copy x")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; n]), "poison out")?;
        ck(m.shift_left(&s, LaunchConfig::for_num_elems(n as u32), &xd, &mut od, true), "launch shift_left")?;
        let want: Vec<f32> = (0..n).map(|i| x[i / BLOCK * BLOCK + (i % BLOCK + 1) % BLOCK]).collect();
        compare("shift_left", &ck(od.to_host_vec(&s), "copy out")?, &want, same_bits_f32)
    });

    report.finish()
}
