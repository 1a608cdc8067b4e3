//! GPU test: Rust kernels calling CUB's block and warp primitives (the CUB scenario of NVIDIA
//! cuda-oxide's `device_ffi_test`). `src/cub_ops.cu` wraps them as `extern "C"` device functions;
//! nvcc compiles it against CCCL (installed by `cargo oxide setup`) to LTOIR and nvJitLink links
//! it with the kernels. Block-wide calls take shared memory that the Rust kernel owns. Random
//! integer-valued inputs (so every f32 sum is exact whatever CUB's order), a partial last block,
//! outputs poisoned first, every result compared with a CPU reference.
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{SharedArray, cuda_module, device, kernel, launch_bounds, sync_threads, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare};

#[device]
unsafe extern "C" {
    fn cub_block_reduce_sum_f32_256(input: f32, temp: *mut u8) -> f32;
    fn cub_block_reduce_max_f32_256(input: f32, temp: *mut u8) -> f32;
    fn cub_block_reduce_sum_f32_128(input: f32, temp: *mut u8) -> f32;
    fn cub_block_reduce_sum_i32_256(input: i32, temp: *mut u8) -> i32;
    fn cub_block_scan_exclusive_sum_f32_256(input: f32, output: *mut f32, block_sum: *mut f32, temp: *mut u8);
    fn cub_block_scan_inclusive_sum_f32_256(input: f32, output: *mut f32, temp: *mut u8);
    fn cub_warp_reduce_sum_f32(input: f32) -> f32;
    fn cub_warp_reduce_max_f32(input: f32) -> f32;
    fn cub_warp_reduce_sum_i32(input: i32) -> i32;
    fn cub_warp_scan_exclusive_sum_f32(input: f32) -> f32;
    fn cub_warp_scan_inclusive_sum_f32(input: f32) -> f32;
    fn cub_get_block_reduce_temp_size_256() -> i32;
    fn cub_get_block_scan_temp_size_256() -> i32;
}

/// Shared bytes each block gives CUB (`-DCUB_TEMP_BYTES` in Cargo.toml; cub_ops.cu refuses to
/// compile if CUB needs more).
const TEMP_BYTES: usize = 4096;
const BLOCK: usize = 256;

#[cuda_module]
mod kernels {
    use super::*;

    /// Per block: the sum and the maximum of its inputs (threads past the end give 0 and -inf).
    #[kernel]
    #[launch_bounds(256)]
    pub fn block_reduce(x: &[f32], sums: &mut [f32], maxs: &mut [f32]) {
        static mut TEMP: SharedArray<u8, TEMP_BYTES, 16> = SharedArray::UNINIT;
        let temp = SharedArray::as_raw_mut_ptr(&raw mut TEMP);
        let i = thread::index_1d().get();
        let inside = i < x.len();
        let sum = unsafe { cub_block_reduce_sum_f32_256(if inside { x[i] } else { 0.0 }, temp) };
        // CUB's storage is reused only after every thread is done with it.
        sync_threads();
        let max = unsafe { cub_block_reduce_max_f32_256(if inside { x[i] } else { f32::NEG_INFINITY }, temp) };
        if thread::threadIdx_x() == 0 {
            let block = thread::blockIdx_x() as usize;
            sums[block] = sum;
            maxs[block] = max;
        }
    }

    /// The same sum over blocks of 128 threads (another instance of CUB's template).
    #[kernel]
    #[launch_bounds(128)]
    pub fn block_reduce_128(x: &[f32], sums: &mut [f32]) {
        static mut TEMP: SharedArray<u8, TEMP_BYTES, 16> = SharedArray::UNINIT;
        let temp = SharedArray::as_raw_mut_ptr(&raw mut TEMP);
        let i = thread::index_1d().get();
        let sum = unsafe { cub_block_reduce_sum_f32_128(if i < x.len() { x[i] } else { 0.0 }, temp) };
        if thread::threadIdx_x() == 0 {
            sums[thread::blockIdx_x() as usize] = sum;
        }
    }

    #[kernel]
    #[launch_bounds(256)]
    pub fn block_reduce_i32(x: &[i32], sums: &mut [i32]) {
        static mut TEMP: SharedArray<u8, TEMP_BYTES, 16> = SharedArray::UNINIT;
        let temp = SharedArray::as_raw_mut_ptr(&raw mut TEMP);
        let i = thread::index_1d().get();
        let sum = unsafe { cub_block_reduce_sum_i32_256(if i < x.len() { x[i] } else { 0 }, temp) };
        if thread::threadIdx_x() == 0 {
            sums[thread::blockIdx_x() as usize] = sum;
        }
    }

    /// Per element: the exclusive and inclusive prefix sums within its block; per block: the total.
    #[kernel]
    #[launch_bounds(256)]
    pub fn block_scan(x: &[f32], exclusive: &mut [f32], inclusive: &mut [f32], totals: &mut [f32]) {
        static mut TEMP: SharedArray<u8, TEMP_BYTES, 16> = SharedArray::UNINIT;
        let temp = SharedArray::as_raw_mut_ptr(&raw mut TEMP);
        let i = thread::index_1d().get();
        let v = if i < x.len() { x[i] } else { 0.0 };
        let (mut excl, mut incl, mut total) = (0.0f32, 0.0f32, 0.0f32);
        unsafe { cub_block_scan_exclusive_sum_f32_256(v, &mut excl, &mut total, temp) };
        sync_threads();
        unsafe { cub_block_scan_inclusive_sum_f32_256(v, &mut incl, temp) };
        if i < x.len() {
            exclusive[i] = excl;
            inclusive[i] = incl;
        }
        if thread::threadIdx_x() == 0 {
            totals[thread::blockIdx_x() as usize] = total;
        }
    }

    /// Per warp (lane 0): sum and maximum of f32, sum of i32; per element: the warp's exclusive
    /// and inclusive prefix sums. Launched with whole warps whose every input exists.
    #[kernel]
    pub fn warp_ops(
        x: &[f32],
        xi: &[i32],
        sums: &mut [f32],
        maxs: &mut [f32],
        isums: &mut [i32],
        exclusive: &mut [f32],
        inclusive: &mut [f32],
    ) {
        let i = thread::index_1d().get();
        let sum = unsafe { cub_warp_reduce_sum_f32(x[i]) };
        let max = unsafe { cub_warp_reduce_max_f32(x[i]) };
        let isum = unsafe { cub_warp_reduce_sum_i32(xi[i]) };
        exclusive[i] = unsafe { cub_warp_scan_exclusive_sum_f32(x[i]) };
        inclusive[i] = unsafe { cub_warp_scan_inclusive_sum_f32(x[i]) };
        if thread::lane_id() == 0 {
            sums[i / 32] = sum;
            maxs[i / 32] = max;
            isums[i / 32] = isum;
        }
    }

    /// The shared memory CUB asks for (one thread).
    #[kernel]
    pub fn temp_sizes(out: &mut [i32]) {
        if thread::index_1d().get() == 0 {
            out[0] = unsafe { cub_get_block_reduce_temp_size_256() };
            out[1] = unsafe { cub_get_block_scan_temp_size_256() };
        }
    }
}

/// Integer-valued floats in [-1000, 1000]: every sum of up to 2^14 of them is exact in f32.
fn integer_floats(rng: &mut Lcg, n: usize) -> Vec<f32> {
    (0..n).map(|_| (rng.next_u32() % 2001) as f32 - 1000.0).collect()
}

fn prefix_sums(chunk: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let mut run = 0.0f32;
    let mut exclusive = Vec::with_capacity(chunk.len());
    let mut inclusive = Vec::with_capacity(chunk.len());
    for &v in chunk {
        exclusive.push(run);
        run += v;
        inclusive.push(run);
    }
    (exclusive, inclusive)
}

fn blocks(n: usize, block: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: (n.div_ceil(block) as u32, 1, 1), block_dim: (block as u32, 1, 1), shared_mem_bytes: 0 }
}

/// Not a multiple of 256: the last block is partial.
const N: usize = 100_003;

fn main() {
    let mut report = Report::new("interop-cub");
    let mut rng = Lcg::from_env_or_clock();
    let (_ctx, stream, module) = report.load(kernels::load);
    let nan = |n: usize| vec![f32::NAN; n];

    report.check("temp_sizes", || {
        let mut out = ck(DeviceBuffer::from_host(&stream, &[-1i32; 2]), "poison out")?;
        ck(module.temp_sizes(&stream, blocks(1, 32), &mut out), "launch temp_sizes")?;
        let sizes = ck(out.to_host_vec(&stream), "copy out")?;
        if sizes.iter().all(|&s| s > 0 && s as usize <= TEMP_BYTES) {
            Ok(())
        } else {
            Err(format!("CUB's temp storage sizes {sizes:?} are not in 1..={TEMP_BYTES}"))
        }
    });

    report.check("block_reduce", || {
        let x = integer_floats(&mut rng, N);
        let nblocks = N.div_ceil(BLOCK);
        let want_sums: Vec<f32> = x.chunks(BLOCK).map(|c| c.iter().sum()).collect();
        let want_maxs: Vec<f32> =
            x.chunks(BLOCK).map(|c| c.iter().copied().fold(f32::NEG_INFINITY, f32::max)).collect();
        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let mut sums = ck(DeviceBuffer::from_host(&stream, &nan(nblocks)), "poison sums")?;
        let mut maxs = ck(DeviceBuffer::from_host(&stream, &nan(nblocks)), "poison maxs")?;
        ck(module.block_reduce(&stream, blocks(N, BLOCK), &x_dev, &mut sums, &mut maxs), "launch block_reduce")?;
        compare("sums", &ck(sums.to_host_vec(&stream), "copy sums")?, &want_sums, PartialEq::eq)?;
        compare("maxs", &ck(maxs.to_host_vec(&stream), "copy maxs")?, &want_maxs, PartialEq::eq)
    });

    report.check("block_reduce_128", || {
        let x = integer_floats(&mut rng, N);
        let want: Vec<f32> = x.chunks(128).map(|c| c.iter().sum()).collect();
        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let mut sums = ck(DeviceBuffer::from_host(&stream, &nan(want.len())), "poison sums")?;
        ck(module.block_reduce_128(&stream, blocks(N, 128), &x_dev, &mut sums), "launch block_reduce_128")?;
        compare("sums", &ck(sums.to_host_vec(&stream), "copy sums")?, &want, PartialEq::eq)
    });

    report.check("block_reduce_i32", || {
        let x: Vec<i32> = (0..N).map(|_| rng.next_u32() as i32 >> 12).collect();
        let want: Vec<i32> = x.chunks(BLOCK).map(|c| c.iter().sum()).collect();
        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let mut sums = ck(DeviceBuffer::from_host(&stream, &vec![i32::MIN; want.len()]), "poison sums")?;
        ck(module.block_reduce_i32(&stream, blocks(N, BLOCK), &x_dev, &mut sums), "launch block_reduce_i32")?;
        compare("sums", &ck(sums.to_host_vec(&stream), "copy sums")?, &want, PartialEq::eq)
    });

    report.check("block_scan", || {
        let x = integer_floats(&mut rng, N);
        let (mut want_excl, mut want_incl) = (Vec::with_capacity(N), Vec::with_capacity(N));
        for chunk in x.chunks(BLOCK) {
            let (e, i) = prefix_sums(chunk);
            want_excl.extend(e);
            want_incl.extend(i);
        }
        let want_totals: Vec<f32> = x.chunks(BLOCK).map(|c| c.iter().sum()).collect();
        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let mut excl = ck(DeviceBuffer::from_host(&stream, &nan(N)), "poison exclusive")?;
        let mut incl = ck(DeviceBuffer::from_host(&stream, &nan(N)), "poison inclusive")?;
        let mut totals = ck(DeviceBuffer::from_host(&stream, &nan(want_totals.len())), "poison totals")?;
        ck(
            module.block_scan(&stream, blocks(N, BLOCK), &x_dev, &mut excl, &mut incl, &mut totals),
            "launch block_scan",
        )?;
        compare("exclusive", &ck(excl.to_host_vec(&stream), "copy exclusive")?, &want_excl, PartialEq::eq)?;
        compare("inclusive", &ck(incl.to_host_vec(&stream), "copy inclusive")?, &want_incl, PartialEq::eq)?;
        compare("totals", &ck(totals.to_host_vec(&stream), "copy totals")?, &want_totals, PartialEq::eq)
    });

    report.check("warp_ops", || {
        let n = 4096 * 32;
        let x = integer_floats(&mut rng, n);
        let xi: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32 >> 8).collect();
        let want_sums: Vec<f32> = x.chunks(32).map(|c| c.iter().sum()).collect();
        let want_maxs: Vec<f32> = x.chunks(32).map(|c| c.iter().copied().fold(f32::NEG_INFINITY, f32::max)).collect();
        let want_isums: Vec<i32> = xi.chunks(32).map(|c| c.iter().sum()).collect();
        let (mut want_excl, mut want_incl) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for chunk in x.chunks(32) {
            let (e, i) = prefix_sums(chunk);
            want_excl.extend(e);
            want_incl.extend(i);
        }
        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let xi_dev = ck(DeviceBuffer::from_host(&stream, &xi), "copy xi")?;
        let mut sums = ck(DeviceBuffer::from_host(&stream, &nan(n / 32)), "poison sums")?;
        let mut maxs = ck(DeviceBuffer::from_host(&stream, &nan(n / 32)), "poison maxs")?;
        let mut isums = ck(DeviceBuffer::from_host(&stream, &vec![i32::MIN; n / 32]), "poison isums")?;
        let mut excl = ck(DeviceBuffer::from_host(&stream, &nan(n)), "poison exclusive")?;
        let mut incl = ck(DeviceBuffer::from_host(&stream, &nan(n)), "poison inclusive")?;
        ck(
            module.warp_ops(
                &stream,
                blocks(n, BLOCK),
                &x_dev,
                &xi_dev,
                &mut sums,
                &mut maxs,
                &mut isums,
                &mut excl,
                &mut incl,
            ),
            "launch warp_ops",
        )?;
        compare("sums", &ck(sums.to_host_vec(&stream), "copy sums")?, &want_sums, PartialEq::eq)?;
        compare("maxs", &ck(maxs.to_host_vec(&stream), "copy maxs")?, &want_maxs, PartialEq::eq)?;
        compare("isums", &ck(isums.to_host_vec(&stream), "copy isums")?, &want_isums, PartialEq::eq)?;
        compare("exclusive", &ck(excl.to_host_vec(&stream), "copy exclusive")?, &want_excl, PartialEq::eq)?;
        compare("inclusive", &ck(incl.to_host_vec(&stream), "copy inclusive")?, &want_incl, PartialEq::eq)
    });

    report.finish()
}
