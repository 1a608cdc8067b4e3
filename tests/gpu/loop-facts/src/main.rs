//! GPU test of three device-compiler facts about loops (codegen-driver/src/): a double-buffer
//! index that toggles between 0 and 1 keeps its shared accesses check-free
//! (`pipeline/toggle_ranges.rs`), a bounds check in the kernel's first block is deferred
//! (`lower/bounds.rs`), and the thread index, used only after the tile loop, is read again
//! there (`pipeline/remat_thread_index.rs`). The n-body / sgemm128 shape gives exactly the CPU's
//! results; more threads than elements, so that the first read is out of bounds, stops the
//! kernel. That check runs last: a stopped kernel leaves the context unusable.
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, SharedMemory, cuda_module, kernel, launch_bounds, sync_threads, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, expect_bounds_stop};

/// Threads per block and elements per tile.
const TILE: usize = 128;

#[cuda_module]
mod kernels {
    use super::*;

    /// Each thread folds every element of `x`, tile by tile through a double-buffered shared
    /// tile, into its own element: `acc = acc * 3 + v` (wrapping), starting from `x[idx]`.
    #[kernel]
    #[launch_bounds(128)]
    pub fn fold_tiles(x: &[u32], mut out: DisjointSlice<u32>) {
        static BUF: SharedMemory<u32, { 2 * TILE }> = SharedMemory::UNINIT;
        let idx = thread::index_1d();
        let mut acc = x[idx.get()];
        let t = thread::threadIdx_x() as usize;
        // SAFETY: each thread writes its own slot of buffer 0; read after the barrier.
        unsafe { BUF.write(t, x[t]) };
        sync_threads();
        let mut buf = 0;
        let mut tile = 0;
        while tile < x.len() {
            let next = tile + TILE;
            let v = if next < x.len() { x[next + t] } else { 0 };
            #[unroll(8)]
            for j in 0..TILE {
                // SAFETY: buffer `buf` is complete (barrier) and nobody writes it now.
                acc = acc.wrapping_mul(3).wrapping_add(unsafe { BUF.read(buf * TILE + j) });
            }
            // SAFETY: each thread writes its own slot of the other buffer, which nobody reads
            // until the barrier below.
            unsafe { BUF.write((buf ^ 1) * TILE + t, v) };
            sync_threads();
            buf ^= 1;
            tile = next;
        }
        if let Some(o) = out.get_mut(idx) {
            *o = acc;
        }
    }
}

/// One block of `TILE` threads per tile (the kernel's launch bounds).
fn blocks_of_a_tile(blocks: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (TILE as u32, 1, 1), shared_mem_bytes: 0 }
}

fn fold_reference(x: &[u32]) -> Vec<u32> {
    // Every thread folds the same sequence; only the start differs.
    x.iter().map(|&start| x.iter().fold(start, |acc, &v| acc.wrapping_mul(3).wrapping_add(v))).collect()
}

fn main() {
    let mut report = Report::new("loop-facts");
    let mut rng = Lcg::from_env_or_clock();
    let (_ctx, s, m) = report.load(kernels::load);

    report.check("double_buffered_fold", || {
        for tiles in [1usize, 2, 37] {
            let n = tiles * TILE;
            let x: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
            let xd = ck(DeviceBuffer::from_host(&s, &x), "copy x")?;
            let mut od = ck(DeviceBuffer::from_host(&s, &vec![0xdead_beefu32; n]), "poison out")?;
            ck(m.fold_tiles(&s, blocks_of_a_tile(tiles), &xd, &mut od), "launch fold_tiles")?;
            compare(
                &format!("fold_tiles ({tiles} tiles)"),
                &ck(od.to_host_vec(&s), "copy out")?,
                &fold_reference(&x),
                |a, b| a == b,
            )?;
        }
        Ok(())
    });

    // Last: a stopped kernel leaves the context unusable.
    report.check("out_of_bounds_first_read_stops", || {
        let n = 4 * TILE;
        let xd = ck(DeviceBuffer::from_host(&s, &vec![1u32; n]), "copy x")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![0u32; n + TILE]), "poison out")?;
        // One block more than `x` has elements: its threads' `x[idx]` is out of bounds.
        let cfg = blocks_of_a_tile(n / TILE + 1);
        ck(m.fold_tiles(&s, cfg, &xd, &mut od), "launch fold_tiles (must be queued)")?;
        expect_bounds_stop(s.synchronize(), "reading x[idx] past its end in the first block")
    });

    report.finish()
}
