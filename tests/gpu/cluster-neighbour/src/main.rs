//! GPU test (sm_90+; build with `--arch sm_90`, see `oxide-arch`): clusters of 4 blocks; each
//! block fills a `SharedArray`, the cluster synchronizes (`barrier.cluster`), and each block reads
//! its neighbour's (rank + 1 mod 4) shared memory through `mapa`. Launched through the typed
//! method and through `cuda_launch!` with `cluster_dim`; both outputs compared with the CPU.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, SharedArray, cluster, cluster_launch, cuda_module, kernel, thread};
use cuda_host::cuda_launch;

#[cuda_module]
mod kernels {
    use super::*;

    pub const THREADS: usize = 128;

    /// `out[i]` = the input element of the same thread in the neighbouring block of the cluster,
    /// `ranks[i]` = `rank * 100 + blocks per cluster`.
    #[kernel]
    #[cluster_launch(4, 1, 1)]
    pub fn neighbour(x: &[u32], mut out: DisjointSlice<u32>, mut ranks: DisjointSlice<u32>) {
        static MINE: SharedArray<u32, THREADS> = SharedArray::new();
        let idx = thread::index_1d();
        let tid = thread::threadIdx_x() as usize;
        let rank = cluster::block_rank();
        let blocks = cluster::num_blocks();
        let v = if idx.get() < x.len() { x[idx.get()] } else { 0 };
        // SAFETY: each thread writes its own slot; others read it only after the cluster barrier.
        unsafe { MINE.write(tid, v) };
        cluster::sync();
        let remote = cluster::map_shared_rank(MINE.as_mut_ptr(), (rank + 1) % blocks);
        // SAFETY: `tid < THREADS`; the neighbour wrote this slot before the barrier and keeps
        // its shared memory until the second barrier.
        let theirs = unsafe { remote.add(tid).read() };
        cluster::sync();
        if let Some(o) = out.get_mut(idx) {
            *o = theirs;
        }
        if let Some(r) = ranks.get_mut(idx) {
            *r = rank * 100 + blocks;
        }
    }
}

const BLOCKS: usize = 132 * 4;
const N: usize = BLOCKS * kernels::THREADS;

struct Lcg(u64);

impl Lcg {
    fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

fn main() {
    match run() {
        Ok(()) => println!("PASS cluster-neighbour: {BLOCKS} blocks in clusters of 4 read their neighbour's shared memory (typed method and cuda_launch!)"),
        Err(err) => {
            eprintln!("FAIL cluster-neighbour: {err}");
            std::process::exit(1);
        }
    }
}

fn check(what: &str, out: &[u32], ranks: &[u32], x: &[u32], seed: u64) -> Result<(), String> {
    let t = kernels::THREADS;
    for i in 0..N {
        let (block, tid) = (i / t, i % t);
        let rank = block % 4;
        let neighbour = block - rank + (rank + 1) % 4;
        let want = x[neighbour * t + tid];
        let want_rank = rank as u32 * 100 + 4;
        if out[i] != want || ranks[i] != want_rank {
            return Err(format!(
                "{what}: element {i} (block {block}, thread {tid}): gpu {} / rank {} cpu {want} / rank {want_rank} (seed {seed})",
                out[i], ranks[i]
            ));
        }
    }
    Ok(())
}

fn run() -> Result<(), String> {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    let mut rng = Lcg(seed);
    let x: Vec<u32> = (0..N).map(|_| rng.next_u32()).collect();

    let ctx = CudaContext::new(0).map_err(|e| format!("CudaContext::new(0): {e}"))?;
    let (major, minor) = ctx.compute_capability();
    if major < 9 {
        return Err(format!("thread block clusters need sm_90 or newer; device 0 is sm_{major}{minor}"));
    }
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).map_err(|e| format!("kernels::load: {e}"))?;
    let x_dev = DeviceBuffer::from_host(&stream, &x).map_err(|e| format!("copy x: {e}"))?;
    let config = LaunchConfig { grid_dim: (BLOCKS as u32, 1, 1), block_dim: (kernels::THREADS as u32, 1, 1), shared_mem_bytes: 0 };

    // 1. The typed method (cluster dimensions from #[cluster_launch]).
    let mut out_dev = DeviceBuffer::from_host(&stream, &vec![u32::MAX; N]).map_err(|e| format!("poison out: {e}"))?;
    let mut ranks_dev = DeviceBuffer::from_host(&stream, &vec![u32::MAX; N]).map_err(|e| format!("poison ranks: {e}"))?;
    module.neighbour(&stream, config, &x_dev, &mut out_dev, &mut ranks_dev).map_err(|e| format!("launch neighbour (typed): {e}"))?;
    stream.synchronize().map_err(|e| format!("synchronize after neighbour (typed): {e}"))?;
    let out = out_dev.to_host_vec(&stream).map_err(|e| format!("out back: {e}"))?;
    let ranks = ranks_dev.to_host_vec(&stream).map_err(|e| format!("ranks back: {e}"))?;
    check("typed method", &out, &ranks, &x, seed)?;

    // 2. cuda_launch! with an explicit cluster_dim.
    let mut out_dev = DeviceBuffer::from_host(&stream, &vec![u32::MAX; N]).map_err(|e| format!("poison out: {e}"))?;
    let mut ranks_dev = DeviceBuffer::from_host(&stream, &vec![u32::MAX; N]).map_err(|e| format!("poison ranks: {e}"))?;
    cuda_launch! {
        kernel: neighbour,
        stream: stream,
        module: module.bundle(),
        config: config,
        cluster_dim: (4, 1, 1),
        args: [slice(x_dev), slice_mut(out_dev), slice_mut(ranks_dev)]
    }
    .map_err(|e| format!("cuda_launch! neighbour: {e}"))?;
    stream.synchronize().map_err(|e| format!("synchronize after cuda_launch! neighbour: {e}"))?;
    let out = out_dev.to_host_vec(&stream).map_err(|e| format!("out back: {e}"))?;
    let ranks = ranks_dev.to_host_vec(&stream).map_err(|e| format!("ranks back: {e}"))?;
    check("cuda_launch!", &out, &ranks, &x, seed)
}
