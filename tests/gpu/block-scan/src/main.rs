//! GPU test: inclusive prefix sum within each block of 256 threads: a warp scan
//! (`shfl.sync.up`), warp totals through shared memory, a scan of those by warp 0, and the
//! offsets added back. Random inputs, partial last block, output poisoned; compared exactly.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, SharedArray, cuda_module, kernel, launch_bounds, sync_threads, thread, warp};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    #[launch_bounds(256)]
    pub fn block_scan(x: &[u32], mut out: DisjointSlice<u32>) {
        static WARP_TOTALS: SharedArray<u32, 8> = SharedArray::new();
        let idx = thread::index_1d();
        let i = idx.get();
        let v = if i < x.len() { x[i] } else { 0 };
        let lane = thread::lane_id();
        let w = thread::warp_id() as usize;
        let scanned = warp::inclusive_scan_sum(v);
        if lane == 31 {
            // SAFETY: one writer per warp slot, read after the barrier.
            unsafe { WARP_TOTALS.write(w, scanned) };
        }
        sync_threads();
        if w == 0 {
            let total = if (lane as usize) < WARP_TOTALS.len() { unsafe { WARP_TOTALS.read(lane as usize) } } else { 0 };
            let prefix = warp::inclusive_scan_sum(total);
            // Every lane of warp 0 has read its total before any lane overwrites one.
            warp::sync_warp(warp::FULL_MASK);
            if (lane as usize) < WARP_TOTALS.len() {
                // SAFETY: lane `l` writes slot `l` only; read by all after the next barrier.
                unsafe { WARP_TOTALS.write(lane as usize, prefix) };
            }
        }
        sync_threads();
        let offset = if w == 0 { 0 } else { unsafe { WARP_TOTALS.read(w - 1) } };
        if let Some(o) = out.get_mut(idx) {
            *o = scanned + offset;
        }
    }
}

const N: usize = 1_000_003;

struct Lcg(u64);

impl Lcg {
    fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

fn main() {
    match run() {
        Ok(()) => println!("PASS block-scan: inclusive scans of {} blocks match the CPU reference", N.div_ceil(256)),
        Err(err) => {
            eprintln!("FAIL block-scan: {err}");
            std::process::exit(1);
        }
    }
}

fn run() -> Result<(), String> {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    let mut rng = Lcg(seed);
    let x: Vec<u32> = (0..N).map(|_| rng.next_u32() % 100_000).collect();
    let mut expected = Vec::with_capacity(N);
    for chunk in x.chunks(256) {
        let mut acc = 0u32;
        for &v in chunk {
            acc += v;
            expected.push(acc);
        }
    }

    let ctx = CudaContext::new(0).map_err(|e| format!("CudaContext::new(0): {e}"))?;
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).map_err(|e| format!("kernels::load: {e}"))?;
    let x_dev = DeviceBuffer::from_host(&stream, &x).map_err(|e| format!("copy x: {e}"))?;
    let mut out_dev = DeviceBuffer::from_host(&stream, &vec![u32::MAX; N]).map_err(|e| format!("poison out: {e}"))?;
    module
        .block_scan(&stream, LaunchConfig::for_num_elems(N as u32), &x_dev, &mut out_dev)
        .map_err(|e| format!("launch block_scan: {e}"))?;
    stream.synchronize().map_err(|e| format!("synchronize after block_scan: {e}"))?;
    let out = out_dev.to_host_vec(&stream).map_err(|e| format!("copy out back: {e}"))?;
    let wrong: Vec<usize> = (0..N).filter(|&i| out[i] != expected[i]).collect();
    if let Some(&first) = wrong.first() {
        return Err(format!(
            "{} of {N} elements differ (seed {seed}); first at {first} (block {}, thread {}): gpu {} cpu {}",
            wrong.len(),
            first / 256,
            first % 256,
            out[first],
            expected[first]
        ));
    }
    Ok(())
}
