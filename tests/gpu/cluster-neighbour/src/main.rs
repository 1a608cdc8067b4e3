//! GPU test (sm_90+; build with `--arch sm_90`, see `oxide-arch`): clusters of 4 blocks; each
//! block fills a `SharedArray`, the cluster synchronizes (`barrier.cluster`), and each block reads
//! its neighbour's (rank + 1 mod 4) shared memory through `mapa`. Launched through the typed
//! method and through `cuda_launch!` with `cluster_dim`; both outputs compared with the CPU.
//! Last, `leader_broadcast`: barriers between two `if tid == 0` blocks, which a release build
//! once duplicated into both arms of the first (the warp then hung at two different `bar.sync`s).
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, SharedArray, cluster, cluster_launch, cuda_module, kernel, sync_threads, thread};
use cuda_host::cuda_launch;

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck};

#[cuda_module]
mod kernels {
    use super::*;

    pub const THREADS: usize = 128;

    /// `out[i]` = the input element of the same thread in the neighbouring block of the cluster,
    /// `ranks[i]` = `rank * 100 + blocks per cluster`.
    #[kernel]
    #[cluster_launch(4, 1, 1)]
    pub fn neighbour(x: &[u32], mut out: DisjointSlice<u32>, mut ranks: DisjointSlice<u32>) {
        static mut MINE: SharedArray<u32, THREADS> = SharedArray::UNINIT;
        let idx = thread::index_1d();
        let tid = thread::threadIdx_x() as usize;
        let rank = cluster::block_rank();
        let blocks = cluster::num_blocks();
        let v = if idx.get() < x.len() { x[idx.get()] } else { 0 };
        // SAFETY: each thread writes its own slot; others read it only after the cluster barrier.
        unsafe { MINE[tid] = v };
        cluster::sync();
        let remote = cluster::map_shared_rank(SharedArray::as_raw_mut_ptr(&raw mut MINE), (rank + 1) % blocks);
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

    /// `out[block]` = `rank * 100 + 42`, written by thread 0 into shared memory before both
    /// barriers and read back by thread 0 after them (NVIDIA's cluster example, test 2).
    #[kernel]
    #[cluster_launch(4, 1, 1)]
    pub fn leader_broadcast(mut out: DisjointSlice<u32>) {
        static mut SLOT: SharedArray<u32, 1> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x();
        if tid == 0 {
            // SAFETY: one writer (thread 0); the others pass the barriers without touching it.
            unsafe { SLOT[0] = cluster::block_rank() * 100 + 42 };
        }
        sync_threads();
        cluster::sync();
        if tid == 0 {
            let block = thread::blockIdx_x() as usize;
            if block < out.len() {
                // SAFETY: one thread per block writes element `block`; read after the barrier.
                unsafe { *out.get_unchecked_mut(block) = SLOT[0] };
            }
        }
    }
}

const BLOCKS: usize = 132 * 4;
const N: usize = BLOCKS * kernels::THREADS;

fn check(out: &[u32], ranks: &[u32], x: &[u32]) -> Result<(), String> {
    let t = kernels::THREADS;
    for i in 0..N {
        let (block, tid) = (i / t, i % t);
        let rank = block % 4;
        let neighbour = block - rank + (rank + 1) % 4;
        let want = x[neighbour * t + tid];
        let want_rank = rank as u32 * 100 + 4;
        if out[i] != want || ranks[i] != want_rank {
            return Err(format!(
                "element {i} (block {block}, thread {tid}): gpu {} / rank {} cpu {want} / rank {want_rank}",
                out[i], ranks[i]
            ));
        }
    }
    Ok(())
}

fn main() {
    let mut report = Report::new("cluster-neighbour");
    let mut rng = Lcg::from_env_or_clock();
    let x: Vec<u32> = (0..N).map(|_| rng.next_u32()).collect();
    let (stream, module) = report.setup(|| {
        let ctx = ck(CudaContext::new(0), "CudaContext::new(0)")?;
        let (major, minor) = ctx.capability();
        if major < 9 {
            return Err(format!("thread block clusters need sm_90 or newer; device 0 is sm_{major}{minor}"));
        }
        let module = ck(kernels::load(&ctx), "kernels::load")?;
        Ok((ctx.default_stream(), module))
    });
    let config = LaunchConfig {
        grid_dim: (BLOCKS as u32, 1, 1),
        block_dim: (kernels::THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    let x_dev = report.setup(|| ck(DeviceBuffer::from_host(&stream, &x), "copy x"));

    // 1. The typed method (cluster dimensions from #[cluster_launch]).
    report.check("typed_method", || {
        let mut out_dev = ck(DeviceBuffer::from_host(&stream, &vec![u32::MAX; N]), "poison out")?;
        let mut ranks_dev = ck(DeviceBuffer::from_host(&stream, &vec![u32::MAX; N]), "poison ranks")?;
        ck(module.neighbour(&stream, config, &x_dev, &mut out_dev, &mut ranks_dev), "launch neighbour (typed)")?;
        ck(stream.synchronize(), "synchronize after neighbour (typed)")?;
        check(&ck(out_dev.to_host_vec(&stream), "out back")?, &ck(ranks_dev.to_host_vec(&stream), "ranks back")?, &x)
    });

    // 2. cuda_launch! with an explicit cluster_dim.
    report.check("cuda_launch_cluster_dim", || {
        let mut out_dev = ck(DeviceBuffer::from_host(&stream, &vec![u32::MAX; N]), "poison out")?;
        let mut ranks_dev = ck(DeviceBuffer::from_host(&stream, &vec![u32::MAX; N]), "poison ranks")?;
        let launched = cuda_launch! {
            kernel: neighbour,
            stream: stream,
            module: module.kernels(),
            config: config,
            cluster_dim: (4, 1, 1),
            args: [slice(x_dev), slice_mut(out_dev), slice_mut(ranks_dev)]
        };
        ck(launched, "cuda_launch! neighbour")?;
        ck(stream.synchronize(), "synchronize after cuda_launch! neighbour")?;
        check(&ck(out_dev.to_host_vec(&stream), "out back")?, &ck(ranks_dev.to_host_vec(&stream), "ranks back")?, &x)
    });

    // 3. Barriers between two `if tid == 0` (a hang here is the duplicated-barrier bug).
    report.check("leader_broadcast", || {
        let mut out_dev = ck(DeviceBuffer::from_host(&stream, &vec![u32::MAX; BLOCKS]), "poison out")?;
        let config = LaunchConfig { grid_dim: (BLOCKS as u32, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
        ck(module.leader_broadcast(&stream, config, &mut out_dev), "launch leader_broadcast")?;
        ck(stream.synchronize(), "synchronize after leader_broadcast")?;
        let out = ck(out_dev.to_host_vec(&stream), "out back")?;
        match (0..BLOCKS).find(|&b| out[b] != (b % 4) as u32 * 100 + 42) {
            None => Ok(()),
            Some(b) => Err(format!("block {b}: gpu {} cpu {}", out[b], (b % 4) as u32 * 100 + 42)),
        }
    });

    report.finish()
}
