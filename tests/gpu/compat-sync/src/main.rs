//! GPU test (sm_90; `oxide-arch`): NVIDIA cuda-oxide's spellings of our constant memory and
//! mbarriers, checked against the CPU on random inputs.
//!
//! - `#[constant]` statics: `set_<name>` queued before a launch, rewritten between launches,
//!   `set_<name>_blocking`; a table read in place with `get_ref()`.
//! - `barrier::*` on a `Barrier` static: token waits (`mbarrier_wait`, `mbarrier_try_wait`)
//!   guarding shared-memory data; `cp_async_mbarrier_arrive` (and `_noinc`) completing a phase
//!   only once each thread's `cp.async` copies have landed.
//! - `ManagedBarrier<Uninit, GeneralBarrier>` / `<_, TmaBarrier, 1>` (NVIDIA's typestate
//!   handles): a guarded neighbour read, then two barriers alternating over several rounds.
//! - `mbarrier_arrive_cluster` on block 0's barrier from every block of a 4-block cluster, with
//!   block 0 waiting by parity, round after round.
#![allow(static_mut_refs)]
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::async_copy::{cp_async_ca_4, cp_async_mbarrier_arrive, cp_async_mbarrier_arrive_noinc};
use cuda_device::barrier::{
    mbarrier_arrive, mbarrier_arrive_cluster, mbarrier_init, mbarrier_inval, mbarrier_try_wait,
    mbarrier_try_wait_parity, mbarrier_wait, nanosleep,
};
use cuda_device::shared::cvta_generic_to_shared_offset;
use cuda_device::{
    Barrier, ConstantMemory, DisjointSlice, GeneralBarrier, ManagedBarrier, SharedArray, TmaBarrier, Uninit, cluster,
    cluster_launch, constant, cuda_module, kernel, thread,
};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare};

#[cuda_module]
mod kernels {
    use super::*;

    pub const THREADS: usize = 256;
    pub const TABLE: usize = 64;

    #[constant]
    static COEFFS: ConstantMemory<[u32; 4]> = ConstantMemory::UNINIT;

    #[constant]
    static LOOKUP: ConstantMemory<[u32; TABLE]> = ConstantMemory::UNINIT;

    /// `out[i] = a + b x + c x^2 + d x^3 + LOOKUP[x % 64]` (wrapping), from constant memory.
    #[kernel]
    pub fn poly(x: &[u32], mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let [a, b, c, d] = COEFFS.get();
        if let Some(o) = out.get_mut(idx) {
            let v = x[i];
            let p = a.wrapping_add(v.wrapping_mul(b.wrapping_add(v.wrapping_mul(c.wrapping_add(v.wrapping_mul(d))))));
            *o = p.wrapping_add(LOOKUP.get_ref()[v as usize % TABLE]);
        }
    }

    /// Each thread stores `x[i]` in shared memory, arrives, waits for the phase by token (`mode`
    /// 0: `mbarrier_wait`, 1: a `mbarrier_try_wait` loop), then reads its neighbour's value.
    #[kernel]
    pub fn neighbour(x: &[u32], mut out: DisjointSlice<u32>, mode: u32) {
        static mut BAR: Barrier = Barrier::UNINIT;
        static mut DATA: SharedArray<u32, THREADS> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x() as usize;
        let idx = thread::index_1d();
        if tid == 0 {
            unsafe { mbarrier_init(&raw mut BAR, thread::blockDim_x()) };
        }
        thread::sync_threads();
        unsafe { DATA[tid] = x[idx.get()] };
        let token = unsafe { mbarrier_arrive(&raw const BAR) };
        if mode == 0 {
            unsafe { mbarrier_wait(&raw const BAR, token) };
        } else {
            while unsafe { !mbarrier_try_wait(&raw const BAR, token) } {}
        }
        let theirs = unsafe { DATA[(tid + 1) % THREADS] };
        if let Some(o) = out.get_mut(idx) {
            *o = theirs;
        }
        thread::sync_threads();
        if tid == 0 {
            unsafe { mbarrier_inval(&raw mut BAR) };
        }
    }

    /// Each thread copies `x[i]` into shared memory with `cp.async` and lets the barrier count
    /// the copy (`noinc` 0: `cp_async_mbarrier_arrive`, the barrier expects one arrival per
    /// thread; 1: `_noinc`, it expects two), arrives itself and waits: no `cp.async` wait and no
    /// `sync_threads` between the copies and the neighbour's read, only the barrier.
    #[kernel]
    pub fn async_neighbour(x: &[u32], mut out: DisjointSlice<u32>, noinc: u32) {
        static mut BAR: Barrier = Barrier::UNINIT;
        static mut DATA: SharedArray<u32, THREADS> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x() as usize;
        let idx = thread::index_1d();
        if tid == 0 {
            unsafe { mbarrier_init(&raw mut BAR, thread::blockDim_x() * (1 + noinc)) };
        }
        thread::sync_threads();
        unsafe {
            cp_async_ca_4(SharedArray::as_raw_mut_ptr(&raw mut DATA).add(tid), x.as_ptr().add(idx.get()));
            if noinc == 0 {
                cp_async_mbarrier_arrive(&raw mut BAR);
            } else {
                cp_async_mbarrier_arrive_noinc(&raw mut BAR);
            }
            let token = mbarrier_arrive(&raw const BAR);
            mbarrier_wait(&raw const BAR, token);
        }
        let theirs = unsafe { DATA[(tid + 1) % THREADS] };
        if let Some(o) = out.get_mut(idx) {
            *o = theirs;
        }
        thread::sync_threads();
        if tid == 0 {
            unsafe { mbarrier_inval(&raw mut BAR) };
        }
    }

    /// NVIDIA's typestate barrier handles: a `GeneralBarrier` guards a neighbour read, then two
    /// `TmaBarrier`s alternate (double buffering) over `rounds` rounds, each round rewriting the
    /// shared data; `out[i]` = neighbour's value + the last round's neighbour value.
    #[kernel]
    pub fn managed_neighbour(x: &[u32], mut out: DisjointSlice<u32>, rounds: u32) {
        static mut BAR: Barrier = Barrier::UNINIT;
        static mut BUF0: Barrier = Barrier::UNINIT;
        static mut BUF1: Barrier = Barrier::UNINIT;
        static mut DATA: SharedArray<u32, THREADS> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x() as usize;
        let idx = thread::index_1d();
        let n = thread::blockDim_x();
        let bar = unsafe { ManagedBarrier::<Uninit, GeneralBarrier>::from_static(&raw mut BAR).init(n) };
        let b0 = unsafe { ManagedBarrier::<Uninit, TmaBarrier>::from_static(&raw mut BUF0).init(n) };
        let b1 = unsafe { ManagedBarrier::<Uninit, TmaBarrier, 1>::from_static(&raw mut BUF1).init(n) };
        unsafe { DATA[tid] = x[idx.get()] };
        bar.wait(bar.arrive());
        let first = unsafe { DATA[(tid + 1) % THREADS] };
        let mut last = 0u32;
        let mut k = 0u32;
        while k < rounds {
            // Everyone has read the previous round's values before they are overwritten.
            if k % 2 == 0 {
                b0.wait(b0.arrive())
            } else {
                b1.wait(b1.arrive())
            }
            unsafe { DATA[tid] = x[idx.get()].wrapping_add(k) };
            if k % 2 == 0 {
                b1.wait(b1.arrive())
            } else {
                b0.wait(b0.arrive())
            }
            last = unsafe { DATA[(tid + 1) % THREADS] };
            k += 1;
        }
        if let Some(o) = out.get_mut(idx) {
            *o = first.wrapping_add(last);
        }
        unsafe {
            let _ = bar.inval();
            let _ = b0.inval();
            let _ = b1.inval();
        }
    }

    /// `rounds` times: thread 0 of every block of the cluster arrives on block 0's barrier
    /// (expecting 4 arrivals) through its `shared::cluster` address; block 0 waits for the
    /// round's parity, counting the rounds it saw complete; then the cluster synchronises.
    /// `out[block]` = rounds completed (block 0: rounds it observed complete).
    #[kernel]
    #[cluster_launch(4, 1, 1)]
    pub fn cluster_rounds(mut out: DisjointSlice<u32>, rounds: u32) {
        static mut BAR: Barrier = Barrier::UNINIT;
        let tid = thread::threadIdx_x();
        let rank = cluster::cluster_ctaidX();
        if tid == 0 {
            unsafe { mbarrier_init(&raw mut BAR, 4) };
        }
        thread::sync_threads();
        let remote = unsafe { cvta_generic_to_shared_offset(cluster::map_shared_rank(&raw const BAR, 0) as *const u8) };
        cluster::cluster_sync();
        let mut seen = 0u32;
        let mut k = 0u32;
        while k < rounds {
            if tid == 0 {
                unsafe { mbarrier_arrive_cluster(remote) };
            }
            if rank == 0 {
                while unsafe { !mbarrier_try_wait_parity(&raw const BAR, k & 1) } {
                    unsafe { nanosleep(32) };
                }
                seen += 1;
            }
            cluster::cluster_sync();
            k += 1;
        }
        if tid == 0 {
            let b = thread::blockIdx_x() as usize;
            if b < out.len() {
                unsafe { *out.get_unchecked_mut(b) = if rank == 0 { seen } else { k } };
            }
        }
    }
}

const BLOCKS: usize = 264;
const N: usize = BLOCKS * kernels::THREADS;

fn poly_cpu(x: &[u32], c: &[u32; 4], table: &[u32; kernels::TABLE]) -> Vec<u32> {
    x.iter()
        .map(|&v| {
            let p = c[0].wrapping_add(
                v.wrapping_mul(c[1].wrapping_add(v.wrapping_mul(c[2].wrapping_add(v.wrapping_mul(c[3]))))),
            );
            p.wrapping_add(table[v as usize % kernels::TABLE])
        })
        .collect()
}

fn neighbour_cpu(x: &[u32]) -> Vec<u32> {
    let t = kernels::THREADS;
    (0..x.len()).map(|i| x[i - i % t + (i % t + 1) % t]).collect()
}

fn main() {
    let mut report = Report::new("compat-sync");
    let mut rng = Lcg::from_env_or_clock();
    let x: Vec<u32> = (0..N).map(|_| rng.next_u32()).collect();
    let (ctx, stream, module) = report.load(kernels::load);
    let (major, minor) = ctx.capability();
    if major < 9 {
        println!("FAIL compat-sync/setup: needs sm_90 or newer; device 0 is sm_{major}{minor}");
        std::process::exit(1);
    }
    let config = LaunchConfig::for_num_elems(N as u32);
    let x_dev = report.setup(|| ck(DeviceBuffer::from_host(&stream, &x), "copy x"));
    let poison = vec![0xDEAD_BEEFu32; N];

    report.check("constant_set_then_launch_then_reset", || {
        let mut table = [0u32; kernels::TABLE];
        table.iter_mut().for_each(|t| *t = rng.next_u32());
        let mut out = ck(DeviceBuffer::from_host(&stream, &poison), "poison out")?;
        for round in 0..2 {
            let c = [rng.next_u32(), rng.next_u32(), rng.next_u32(), rng.next_u32()];
            // Queued on the stream before the launch; a temporary is fine.
            ck(module.set_coeffs(&stream, &{ c }), "set_coeffs")?;
            if round == 0 {
                ck(module.set_lookup(&stream, &table), "set_lookup")?;
            } else {
                table.reverse();
                ck(module.set_lookup_blocking(&table), "set_lookup_blocking")?;
            }
            ck(module.poly(&stream, config, &x_dev, &mut out), "launch poly")?;
            let got = ck(out.to_host_vec(&stream), "out back")?;
            compare(&format!("poly round {round}"), &got, &poly_cpu(&x, &c, &table), PartialEq::eq)?;
        }
        Ok(())
    });

    // The four neighbour checks differ only in the kernel and its mode argument.
    let neighbour_checks: [(&str, u32, bool); 4] = [
        ("barrier_wait_token", 0, false),
        ("barrier_try_wait_token", 1, false),
        ("cp_async_mbarrier_arrive", 0, true),
        ("cp_async_mbarrier_arrive_noinc", 1, true),
    ];
    for (name, mode, via_cp_async) in neighbour_checks {
        report.check(name, || {
            let mut out = ck(DeviceBuffer::from_host(&stream, &poison), "poison out")?;
            let cfg = LaunchConfig {
                grid_dim: (BLOCKS as u32, 1, 1),
                block_dim: (kernels::THREADS as u32, 1, 1),
                shared_mem_bytes: 0,
            };
            if via_cp_async {
                ck(module.async_neighbour(&stream, cfg, &x_dev, &mut out, mode), "launch async_neighbour")?;
            } else {
                ck(module.neighbour(&stream, cfg, &x_dev, &mut out, mode), "launch neighbour")?;
            }
            compare(name, &ck(out.to_host_vec(&stream), "out back")?, &neighbour_cpu(&x), PartialEq::eq)
        });
    }

    report.check("managed_barrier_typestate", || {
        let cfg = LaunchConfig {
            grid_dim: (BLOCKS as u32, 1, 1),
            block_dim: (kernels::THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let t = kernels::THREADS;
        for rounds in [0u32, 1, 6] {
            let mut out = ck(DeviceBuffer::from_host(&stream, &poison), "poison out")?;
            ck(module.managed_neighbour(&stream, cfg, &x_dev, &mut out, rounds), "launch managed_neighbour")?;
            let want: Vec<u32> = (0..N)
                .map(|i| {
                    let j = i - i % t + (i % t + 1) % t;
                    x[j].wrapping_add(if rounds == 0 { 0 } else { x[j].wrapping_add(rounds - 1) })
                })
                .collect();
            compare(
                &format!("managed_neighbour({rounds})"),
                &ck(out.to_host_vec(&stream), "out back")?,
                &want,
                PartialEq::eq,
            )?;
        }
        Ok(())
    });

    report.check("mbarrier_arrive_cluster_rounds", || {
        const CLUSTERS: usize = 33;
        for rounds in [1u32, 2, 7, 256] {
            let mut out = ck(DeviceBuffer::from_host(&stream, &vec![u32::MAX; 4 * CLUSTERS]), "poison out")?;
            let cfg =
                LaunchConfig { grid_dim: (4 * CLUSTERS as u32, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
            ck(module.cluster_rounds(&stream, cfg, &mut out, rounds), "launch cluster_rounds")?;
            let got = ck(out.to_host_vec(&stream), "out back")?;
            compare(&format!("cluster_rounds({rounds})"), &got, &vec![rounds; 4 * CLUSTERS], PartialEq::eq)?;
        }
        Ok(())
    });

    report.finish()
}
