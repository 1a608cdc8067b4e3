//! GPU test: the one-thread-one-element guarantee of `DisjointSlice` under every launch shape.
//! Each thread writes its `index_1d()` through `DisjointSlice::get_mut` and counts the visit with
//! an atomic; under 1D, 2D and 3D blocks and grids (partial last blocks included) every element
//! must be written once, by the thread whose index it is. A grid-stride loop over more elements
//! than threads must visit each element exactly once in every shape too.
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, atomic, cuda_module, kernel, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Report, ck, compare};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn mark(mut out: DisjointSlice<u64>, hits: &mut [u32]) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = i as u64;
            // SAFETY: `i < out.len() == hits.len()`, and every access to `hits` is atomic.
            unsafe { atomic::add(hits.as_mut_ptr().add(i), 1u32) };
        }
    }

    #[kernel]
    pub fn stride(mut out: DisjointSlice<u32>, hits: &mut [u32]) {
        let n = out.len();
        for idx in thread::grid_stride(n) {
            let i = idx.get();
            if let Some(o) = out.get_mut(idx) {
                *o = (i as u32).wrapping_mul(2654435761);
                // SAFETY: `i < n == hits.len()`, and every access to `hits` is atomic.
                unsafe { atomic::add(hits.as_mut_ptr().add(i), 1u32) };
            }
        }
    }
}

/// (grid, block) shapes: 1D, the (32, 8, 1) blocks, 3D blocks and grids, odd sizes.
const SHAPES: [((u32, u32, u32), (u32, u32, u32)); 6] = [
    ((40, 1, 1), (256, 1, 1)),
    ((13, 1, 1), (32, 8, 1)),
    ((5, 3, 1), (16, 16, 1)),
    ((3, 2, 2), (8, 8, 4)),
    ((7, 3, 2), (33, 7, 3)),
    ((1, 1, 9), (1, 1, 64)),
];

fn main() {
    let mut report = Report::new("launch-shapes");
    let (_ctx, stream, module) = report.load(kernels::load);

    for (grid, block) in SHAPES {
        let config = LaunchConfig { grid_dim: grid, block_dim: block, shared_mem_bytes: 0 };
        let threads = (grid.0 * grid.1 * grid.2 * block.0 * block.1 * block.2) as usize;
        // More elements than threads are left unwritten (index_1d covers 0..threads).
        let n = threads + 17;
        report.check(&format!("index_1d grid {grid:?} block {block:?}"), || {
            let mut out = ck(DeviceBuffer::from_host(&stream, &vec![u64::MAX; n]), "poison out")?;
            let mut hits = ck(DeviceBuffer::from_host(&stream, &vec![0u32; n]), "zero hits")?;
            ck(module.mark(&stream, config, &mut out, &mut hits), "launch mark")?;
            ck(stream.synchronize(), "synchronize after mark")?;
            let want_out: Vec<u64> = (0..n).map(|i| if i < threads { i as u64 } else { u64::MAX }).collect();
            let want_hits: Vec<u32> = (0..n).map(|i| u32::from(i < threads)).collect();
            compare("hits", &ck(hits.to_host_vec(&stream), "copy hits")?, &want_hits, |a, b| a == b)?;
            compare("out", &ck(out.to_host_vec(&stream), "copy out")?, &want_out, |a, b| a == b)
        });
        report.check(&format!("grid_stride grid {grid:?} block {block:?}"), || {
            let n = threads * 3 + 5;
            let mut out = ck(DeviceBuffer::from_host(&stream, &vec![0xdead_beefu32; n]), "poison out")?;
            let mut hits = ck(DeviceBuffer::from_host(&stream, &vec![0u32; n]), "zero hits")?;
            ck(module.stride(&stream, config, &mut out, &mut hits), "launch stride")?;
            ck(stream.synchronize(), "synchronize after stride")?;
            let want_out: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
            compare("hits", &ck(hits.to_host_vec(&stream), "copy hits")?, &vec![1u32; n], |a, b| a == b)?;
            compare("out", &ck(out.to_host_vec(&stream), "copy out")?, &want_out, |a, b| a == b)
        });
    }
    report.finish()
}
