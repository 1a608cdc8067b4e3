//! GPU test (sm_90; `oxide-arch`): `#[cooperative_launch]` kernels, whose every launch is
//! cooperative, checked against the CPU on random inputs.
//!
//! - the generated launch method of a `#[cooperative_launch]` kernel runs a two-phase
//!   `grid::sync()` (each block's partial sum, then every block sums all partials) with one and
//!   two blocks per SM;
//! - `cuda_launch!` of the same kernel by name, from a bundle with its manifest: the manifest's
//!   `cooperative` flag makes that launch cooperative too (else `grid::sync()` traps);
//! - a grid larger than the GPU holds at once is refused before launching, with an error that
//!   says how many blocks fit (the output stays poisoned);
//! - `#[cluster_launch(2, 1, 1)]` + `#[cooperative_launch]` + `#[launch_contract]`:
//!   `prepare_<kernel>` accepts a fitting grid and refuses an oversized one with
//!   `LaunchContractError::CooperativeGridTooLarge`.
use cuda_core::{DeviceBuffer, LaunchConfig, LaunchConfig1D, LaunchContractError};
use cuda_device::{DisjointSlice, cluster_launch, cooperative_launch, grid, kernel, launch_contract, thread};
use cuda_host::{cuda_launch, cuda_module, load_kernel_module};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare};

#[cuda_module]
mod kernels {
    use super::*;

    pub const THREADS: u32 = 128;

    /// Thread 0 of block `b` sums its block's slice of `x` into `partial[b]`; after
    /// `grid::sync()` it sums every block's partial into `out[b]`.
    #[kernel]
    #[cooperative_launch]
    pub fn grid_total(x: &[u32], partial: DisjointSlice<u32>, out: DisjointSlice<u32>) {
        two_phase(x, partial, out);
    }

    /// The same, in clusters of two blocks, under a launch contract.
    #[kernel]
    #[cluster_launch(2, 1, 1)]
    #[cooperative_launch]
    #[launch_contract(domain = 1, block = (128, 1, 1))]
    pub fn cluster_total(x: &[u32], partial: DisjointSlice<u32>, out: DisjointSlice<u32>) {
        two_phase(x, partial, out);
    }

    #[inline(always)]
    fn two_phase(x: &[u32], mut partial: DisjointSlice<u32>, mut out: DisjointSlice<u32>) {
        let b = thread::blockIdx_x() as usize;
        let blocks = thread::gridDim_x() as usize;
        let t = thread::blockDim_x() as usize;
        if thread::threadIdx_x() == 0 {
            let mut sum = 0u32;
            for i in b * t..(b + 1) * t {
                sum = sum.wrapping_add(x[i]);
            }
            if b < partial.len() {
                // SAFETY: in bounds; only this block's thread 0 writes slot `b`.
                unsafe { *partial.get_unchecked_mut(b) = sum };
            }
        }
        grid::sync();
        if thread::threadIdx_x() == 0 {
            let base = partial.as_mut_ptr() as *const u32;
            let mut total = 0u32;
            for i in 0..blocks.min(partial.len()) {
                // SAFETY: in bounds; every write happened before grid::sync().
                total = total.wrapping_add(unsafe { *base.add(i) });
            }
            if b < out.len() {
                // SAFETY: in bounds; only this block's thread 0 writes slot `b`.
                unsafe { *out.get_unchecked_mut(b) = total };
            }
        }
    }
}

fn total_cpu(x: &[u32], blocks: usize) -> Vec<u32> {
    let t = x[..blocks * kernels::THREADS as usize].iter().fold(0u32, |a, &v| a.wrapping_add(v));
    vec![t; blocks]
}

fn main() {
    let mut report = Report::new("coop-launch");
    let mut rng = Lcg::from_env_or_clock();
    let (ctx, stream, module) = report.load(kernels::load);
    let (major, minor) = ctx.capability();
    if major < 9 {
        println!("FAIL coop-launch/setup: needs sm_90 or newer; device 0 is sm_{major}{minor}");
        std::process::exit(1);
    }
    let sms = ctx.sm_count() as usize;
    let max_blocks = 2 * sms;
    let x: Vec<u32> = (0..max_blocks * kernels::THREADS as usize).map(|_| rng.next_u32()).collect();
    let x_dev = report.setup(|| ck(DeviceBuffer::from_host(&stream, &x), "copy x"));
    let config = |blocks: usize| LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (kernels::THREADS, 1, 1),
        shared_mem_bytes: 0,
    };

    for (blocks, name) in [(sms, "method_grid_sync_one_block_per_sm"), (max_blocks, "method_grid_sync_two_per_sm")] {
        report.check(name, || {
            let mut partial = ck(DeviceBuffer::from_host(&stream, &vec![0xDEAD_BEEFu32; blocks]), "poison")?;
            let mut out = ck(DeviceBuffer::from_host(&stream, &vec![0xDEAD_BEEFu32; blocks]), "poison")?;
            ck(module.grid_total(&stream, config(blocks), &x_dev, &mut partial, &mut out), "launch grid_total")?;
            compare(name, &ck(out.to_host_vec(&stream), "out back")?, &total_cpu(&x, blocks), PartialEq::eq)
        });
    }

    report.check("cuda_launch_by_name_reads_the_manifest", || {
        let bundle = ck(load_kernel_module(&ctx, env!("CARGO_CRATE_NAME")), "load_kernel_module")?;
        let mut partial = ck(DeviceBuffer::from_host(&stream, &vec![0xDEAD_BEEFu32; sms]), "poison")?;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![0xDEAD_BEEFu32; sms]), "poison")?;
        let launched = cuda_launch! {
            kernel: grid_total, stream: stream, module: bundle, config: config(sms),
            args: [slice(x_dev), slice_mut(partial), slice_mut(out)]
        };
        ck(launched, "cuda_launch! grid_total")?;
        compare("cuda_launch!", &ck(out.to_host_vec(&stream), "out back")?, &total_cpu(&x, sms), PartialEq::eq)
    });

    report.check("oversized_grid_refused_before_launch", || {
        let blocks = 1 << 20;
        let mut partial = ck(DeviceBuffer::from_host(&stream, &vec![7u32; 4]), "poison")?;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![7u32; 4]), "poison")?;
        match module.grid_total(&stream, config(blocks), &x_dev, &mut partial, &mut out) {
            Ok(()) => Err("a grid of 2^20 blocks was launched cooperatively".into()),
            Err(e) => {
                let m = e.to_string();
                if !(m.contains("cooperative grid has 1048576 blocks") && m.contains("can be resident at once")) {
                    return Err(format!("unexpected error: {m}"));
                }
                println!("    refused: {m}");
                compare("untouched", &ck(out.to_host_vec(&stream), "out back")?, &[7u32; 4], PartialEq::eq)
            }
        }
    });

    report.check("cluster_cooperative_prepared", || {
        let blocks = sms - sms % 2;
        let prepared = ck(
            module.prepare_cluster_total(LaunchConfig1D::new(blocks as u32, kernels::THREADS, 0)),
            "prepare_cluster_total",
        )?;
        let mut partial = ck(DeviceBuffer::from_host(&stream, &vec![0xDEAD_BEEFu32; blocks]), "poison")?;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![0xDEAD_BEEFu32; blocks]), "poison")?;
        ck(module.cluster_total(&stream, &prepared, &x_dev, &mut partial, &mut out), "launch cluster_total")?;
        compare("cluster_total", &ck(out.to_host_vec(&stream), "out back")?, &total_cpu(&x, blocks), PartialEq::eq)
    });

    report.check("cluster_cooperative_oversized_prepare_refused", || {
        match module.prepare_cluster_total(LaunchConfig1D::new(1 << 20, kernels::THREADS, 0)) {
            Err(LaunchContractError::CooperativeGridTooLarge { blocks, resident_capacity, .. })
                if blocks == 1 << 20 && resident_capacity > 0 && resident_capacity < blocks =>
            {
                Ok(())
            }
            Err(e) => Err(format!("unexpected error: {e}")),
            Ok(_) => Err("an oversized cooperative cluster grid was prepared".into()),
        }
    });

    report.finish()
}
