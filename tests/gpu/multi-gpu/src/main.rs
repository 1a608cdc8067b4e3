//! GPU test: several GPUs in one process, written for N and run with the N given
//! (`--devices N|all`, or `OXIDE_GPUS`; 1 by default, so the bundle proves N = 1 and
//! `scripts/multi-gpu-check.sh` runs it on every visible GPU):
//!
//! - `placement`: `init_device_contexts` past the driver's count refused (nothing opened),
//!   `kernels::load_async(d)` launches running on device `d` on a stream of its pool,
//!   `zip!`/`zip_all` of operations on different devices running at the same time (a kernel that
//!   waits for a flag the other device's kernel raises), buffers of another context refused at
//!   launch unless peer access is on;
//! - `copies`: `copy_peer_async` (peer path) and `copy_peer_staged_async` (pinned host memory)
//!   between two contexts of each GPU and between every pair of GPUs, with the stream on either
//!   side, sizes from 0 to three staging chunks; the async `copy_peer` operations;
//! - `collectives`: NCCL over the N GPUs (one rank for N = 1): all-reduce (sum, max, mean; in and
//!   out of place; f16 to f64), all-gather, reduce-scatter, broadcast, a group of two, and the
//!   arguments refused before anything is queued.
//!
//! Random inputs, poisoned outputs, CPU references, every call checked; exit 1 on a failure.
#![feature(f16)]

mod collectives;
mod copies;
mod placement;

use cuda_core::{CudaContext, DeviceCopy};
use cuda_device::atomic::{AtomicOrdering, SystemAtomicU32};
use cuda_device::{DisjointSlice, clock64, cuda_module, kernel, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck};

#[cuda_module]
mod kernels {
    use super::*;

    /// `y = k * x + y` (wrapping u32: exact on both sides).
    #[kernel]
    pub fn scale_add(k: u32, x: &[u32], mut y: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(y) = y.get_mut(idx) {
            *y = k.wrapping_mul(x[i]).wrapping_add(*y);
        }
    }

    /// Thread 0 spins until `*flag` is 1, for at most `max_cycles` clock cycles, and writes 1
    /// into `out[0]` when it saw the flag, 2 when it gave up.
    ///
    /// # Safety
    /// `flag` is a `u32` that every device taking part (and the host) can access atomically,
    /// e.g. in pinned host memory, alive until the kernel has finished.
    #[kernel]
    pub unsafe fn wait_for_flag(flag: *mut u32, max_cycles: u64, mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        if let Some(out) = out.get_mut(idx) {
            // SAFETY: the caller's contract; only accessed atomically while the kernels run.
            let cell = unsafe { SystemAtomicU32::from_ptr(flag) };
            let start = clock64();
            let mut seen = 2;
            while clock64().wrapping_sub(start) < max_cycles {
                if cell.load(AtomicOrdering::Acquire) == 1 {
                    seen = 1;
                    break;
                }
            }
            *out = seen;
        }
    }

    /// Thread 0 sets `*flag` to 1.
    ///
    /// # Safety
    /// As for `wait_for_flag`.
    #[kernel]
    pub unsafe fn raise_flag(flag: *mut u32) {
        if thread::index_1d().get() == 0 {
            // SAFETY: the caller's contract.
            unsafe { SystemAtomicU32::from_ptr(flag) }.store(1, AtomicOrdering::Release);
        }
    }
}

/// The number of devices to test: `--devices N|all`, else `OXIDE_GPUS`, else 1.
fn devices_wanted(available: usize) -> Result<usize, String> {
    let mut args = std::env::args().skip(1);
    let mut wanted = std::env::var("OXIDE_GPUS").ok();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--devices" => wanted = Some(args.next().ok_or("--devices needs a value: a number or `all`")?),
            other => return Err(format!("unknown argument `{other}`; usage: gpu-multi-gpu [--devices N|all]")),
        }
    }
    let n = match wanted.as_deref() {
        None => 1,
        Some("all") => available,
        Some(n) => n.parse::<usize>().map_err(|_| format!("--devices {n}: not a number nor `all`"))?,
    };
    if n == 0 || n > available {
        return Err(format!("--devices {n}: the driver reports {available} device(s); give 1..={available} or `all`"));
    }
    Ok(n)
}

/// `len` random u32s.
fn random_u32(rng: &mut Lcg, len: usize) -> Vec<u32> {
    (0..len).map(|_| rng.next_u32()).collect()
}

/// Compares exactly, describing the first difference.
fn same<T: PartialEq + std::fmt::Debug + DeviceCopy>(what: &str, got: &[T], want: &[T]) -> Result<(), String> {
    harness::compare(what, got, want, |a, b| a == b)
}

fn main() {
    let mut report = Report::new("multi-gpu");
    let mut rng = Lcg::from_env_or_clock();
    let available = report.setup(|| ck(CudaContext::device_count(), "CudaContext::device_count"));
    let n = report.setup(|| devices_wanted(available));
    println!("devices: {n} of the {available} the driver reports");
    placement::checks(&mut report, &mut rng, n, available);
    copies::checks(&mut report, &mut rng, n);
    collectives::checks(&mut report, &mut rng, n);
    report.finish()
}
