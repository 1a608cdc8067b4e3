//! GPU test: inclusive prefix sum within each block of 256 threads: a warp scan
//! (`shfl.sync.up`), warp totals through shared memory, a scan of those by warp 0, and the
//! offsets added back. Random inputs, partial last block, output poisoned; compared exactly.
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, SharedArray, cuda_module, kernel, launch_bounds, sync_threads, thread, warp};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    #[launch_bounds(256)]
    pub fn block_scan(x: &[u32], mut out: DisjointSlice<u32>) {
        static mut WARP_TOTALS: SharedArray<u32, 8> = SharedArray::UNINIT;
        let idx = thread::index_1d();
        let i = idx.get();
        let v = if i < x.len() { x[i] } else { 0 };
        let lane = thread::lane_id();
        let w = thread::warp_id() as usize;
        let scanned = warp::inclusive_scan_sum(v);
        if lane == 31 {
            // SAFETY: one writer per warp slot, read after the barrier.
            unsafe { WARP_TOTALS[w] = scanned };
        }
        sync_threads();
        if w == 0 {
            let total = if lane < 8 { unsafe { WARP_TOTALS[lane as usize] } } else { 0 };
            let prefix = warp::inclusive_scan_sum(total);
            // Every lane of warp 0 has read its total before any lane overwrites one.
            warp::sync_warp(warp::FULL_MASK);
            if lane < 8 {
                // SAFETY: lane `l` writes slot `l` only; read by all after the next barrier.
                unsafe { WARP_TOTALS[lane as usize] = prefix };
            }
        }
        sync_threads();
        let offset = if w == 0 { 0 } else { unsafe { WARP_TOTALS[w - 1] } };
        if let Some(o) = out.get_mut(idx) {
            *o = scanned + offset;
        }
    }
}

const N: usize = 1_000_003;

fn main() {
    let mut report = Report::new("block-scan");
    let mut rng = Lcg::from_env_or_clock();
    let (_ctx, stream, module) = report.load(kernels::load);

    // Element `i` is thread `i % 256` of block `i / 256`.
    report.check("inclusive_scans", || {
        let x: Vec<u32> = (0..N).map(|_| rng.next_u32() % 100_000).collect();
        let mut expected = Vec::with_capacity(N);
        for chunk in x.chunks(256) {
            let mut acc = 0u32;
            for &v in chunk {
                acc += v;
                expected.push(acc);
            }
        }

        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let mut out_dev = ck(DeviceBuffer::from_host(&stream, &vec![u32::MAX; N]), "poison out")?;
        ck(
            module.block_scan(&stream, LaunchConfig::for_num_elems(N as u32), &x_dev, &mut out_dev),
            "launch block_scan",
        )?;
        ck(stream.synchronize(), "synchronize after block_scan")?;
        compare("scans", &ck(out_dev.to_host_vec(&stream), "copy out back")?, &expected, PartialEq::eq)
    });

    report.finish()
}
