//! GPU test (sm_90+; build with `--arch sm_90`, see `oxide-arch`): clusters of 4 blocks; each
//! block fills a `SharedArray`, the cluster synchronizes (`barrier.cluster`), and each block reads
//! its neighbour's (rank + 1 mod 4) shared memory through `mapa`. Launched through the typed
//! method and through `cuda_launch!` with `cluster_dim`; both outputs compared with the CPU.
//! Last, `leader_broadcast`: barriers between two `if tid == 0` blocks, which a release build
//! once duplicated into both arms of the first (the warp then hung at two different `bar.sync`s).
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_host::cuda_launch;

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck};

// The kernels, in a file of their own: tests/tests/device_api.rs builds the same file for its
// golden PTX checks, so the PTX checked there is the code run here.
include!("kernels.rs");

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
