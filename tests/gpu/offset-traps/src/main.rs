//! GPU test of two after-`opt` rewrites (codegen-driver/src/pipeline/): the checked accesses
//! `x[base + t + 256 * j]` of an unrolled loop share the check of the largest offset
//! (`offset_checks.rs`), and a loop counter with a constant range is 32-bit (`narrow_counters.rs`).
//! In-bounds rows, up to the very last element, give exactly the CPU's results; a slice one
//! element short, so that only the last thread's last access is out of bounds, stops the kernel.
//! That check runs last: a trap leaves the context unusable.
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, SharedMemory, cuda_module, kernel, launch_bounds, sync_threads, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, expect_bounds_stop, same_bits_f32};

/// Elements per row: 256 threads x 4.
const ROW: usize = 1024;

#[cuda_module]
mod kernels {
    use super::*;

    /// `y = 2x + 1` row by row, one block of 256 threads per row, 4 elements per thread (the
    /// softmax / layernorm access pattern).
    #[kernel]
    #[launch_bounds(256)]
    pub fn scale_rows(x: &[f32], y: &mut [f32]) {
        let t = thread::threadIdx_x() as usize;
        let base = thread::blockIdx_x() as usize * ROW;
        let mut v = [0.0f32; 4];
        #[unroll]
        for j in 0..4 {
            v[j] = x[base + t + 256 * j];
        }
        #[unroll]
        for j in 0..4 {
            y[base + t + 256 * j] = v[j] * 2.0 + 1.0;
        }
    }

    /// Each thread sums a 128-element shared tile in order (the n-body loop: constant range,
    /// unrolled by 8), scaled by its index.
    #[kernel]
    #[launch_bounds(128)]
    pub fn tile_sums(x: &[f32], mut out: DisjointSlice<f32>) {
        static TILE: SharedMemory<f32, 128> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x() as usize;
        // SAFETY: each thread writes its own slot; the tile is read after the barrier.
        unsafe { TILE.write(t, x[t]) };
        sync_threads();
        let mut acc = 0.0f32;
        #[unroll(8)]
        for j in 0..128 {
            // SAFETY: no thread writes the tile after the barrier.
            acc += unsafe { TILE.read(j) };
        }
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = acc * i as f32;
        }
    }
}

fn main() {
    let mut report = Report::new("offset-traps");
    let mut rng = Lcg::from_env_or_clock();
    let (_ctx, s, m) = report.load(kernels::load);
    let rows = 37usize;
    let cfg = LaunchConfig { grid_dim: (rows as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };

    report.check("rows_up_to_the_last_element", || {
        // Exactly `rows` rows: the last thread's last access is the last element.
        let x = rng.vec_f32(rows * ROW);
        let xd = ck(DeviceBuffer::from_host(&s, &x), "copy x")?;
        let mut yd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; rows * ROW]), "poison y")?;
        ck(m.scale_rows(&s, cfg, &xd, &mut yd), "launch scale_rows")?;
        let want: Vec<f32> = x.iter().map(|v| v * 2.0 + 1.0).collect();
        compare("scale_rows", &ck(yd.to_host_vec(&s), "copy y")?, &want, same_bits_f32)
    });

    report.check("tile_sums_in_order", || {
        let n = 1000usize;
        let x = rng.vec_f32(128);
        let xd = ck(DeviceBuffer::from_host(&s, &x), "copy x")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; n]), "poison out")?;
        let cfg =
            LaunchConfig { grid_dim: (n.div_ceil(128) as u32, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
        ck(m.tile_sums(&s, cfg, &xd, &mut od), "launch tile_sums")?;
        let sum = x.iter().fold(0.0f32, |a, v| a + v);
        let want: Vec<f32> = (0..n).map(|i| sum * i as f32).collect();
        compare("tile_sums", &ck(od.to_host_vec(&s), "copy out")?, &want, same_bits_f32)
    });

    // Last: a trap leaves the context unusable.
    report.check("one_past_the_end_in_the_last_access_stops_the_kernel", || {
        let x = rng.vec_f32(rows * ROW - 1);
        let xd = ck(DeviceBuffer::from_host(&s, &x), "copy x")?;
        let mut yd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; rows * ROW]), "poison y")?;
        ck(m.scale_rows(&s, cfg, &xd, &mut yd), "launch scale_rows (must be queued)")?;
        expect_bounds_stop(s.synchronize(), "reading one element past the end")
    });

    report.finish()
}
