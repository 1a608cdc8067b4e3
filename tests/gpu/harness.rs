//! Shared by the GPU test crates (`#[path = "../../harness.rs"] mod harness;`): reproducible
//! random inputs, checked CUDA calls, and one PASS/FAIL line per check with a non-zero exit on failure.
#![allow(dead_code)]

use std::fmt::Display;
use std::sync::Arc;

use cuda_core::{CudaContext, CudaStream};

/// The seed of a binary's random inputs: `GPU_TEST_SEED`, else the clock; printed, so a failure can
/// be replayed.
pub fn seed_from_env_or_clock() -> u64 {
    let seed = std::env::var("GPU_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    });
    println!("seed {seed} (set GPU_TEST_SEED to replay)");
    seed
}

/// A 64-bit LCG (Knuth's MMIX constants): reproducible inputs without a dependency.
pub struct Lcg(pub u64);

impl Lcg {
    /// Seeded by [`seed_from_env_or_clock`].
    pub fn from_env_or_clock() -> Lcg {
        Lcg(seed_from_env_or_clock())
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let x = self.0;
        // xorshift the output: the LCG's low bits alone are weak.
        x ^ (x >> 29) ^ (x << 17)
    }

    /// The high half of [`Lcg::next_u64`].
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// A float in [-1000, 1000).
    pub fn next_f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2000.0 - 1000.0
    }

    pub fn next_f64(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) * 2000.0 - 1000.0
    }

    pub fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.next_f32()).collect()
    }
}

/// Turns a runtime error into the failure text, naming the call that failed.
pub fn ck<T, E: Display>(result: Result<T, E>, what: &str) -> Result<T, String> {
    result.map_err(|e| format!("{what}: {e}"))
}

/// Compares element by element (bit for bit with `eq`), describing the first mismatch. `want` may
/// hold something other than the element type, e.g. the set of results a CPU reference allows.
pub fn compare<G: std::fmt::Debug, W: std::fmt::Debug>(
    what: &str,
    got: &[G],
    want: &[W],
    eq: impl Fn(&G, &W) -> bool,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{what}: got {} elements, expected {}", got.len(), want.len()));
    }
    let wrong: Vec<usize> = (0..got.len()).filter(|&i| !eq(&got[i], &want[i])).collect();
    match wrong.first() {
        None => Ok(()),
        Some(&i) => Err(format!(
            "{what}: {} of {} elements differ; first at {i}: gpu {:?} cpu {:?}",
            wrong.len(),
            got.len(),
            got[i],
            want[i]
        )),
    }
}

/// The result of synchronizing after a kernel that must stop at a failed bounds check: `Ok`
/// when it stopped with one of the errors a stopped kernel gives (trap, or a poisoned address);
/// `what_ran` says what should not have completed.
#[allow(dead_code)] // not every GPU test crate plants an out-of-bounds access
pub fn expect_bounds_stop(result: Result<(), cuda_core::DriverError>, what_ran: &str) -> Result<(), String> {
    match result {
        Ok(()) => Err(format!("synchronize succeeded after {what_ran}")),
        Err(e) => {
            let codes = ["CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ILLEGAL_ADDRESS"];
            if codes.contains(&e.name()) {
                println!("    (stopped with {})", e.name());
                Ok(())
            } else {
                Err(format!("expected one of {codes:?}, got {}", e.name()))
            }
        }
    }
}

pub fn same_bits_f32(a: &f32, b: &f32) -> bool {
    a.to_bits() == b.to_bits()
}

/// Collects the checks of one test binary.
pub struct Report {
    name: &'static str,
    passed: usize,
    failed: usize,
}

impl Report {
    pub fn new(name: &'static str) -> Report {
        Report { name, passed: 0, failed: 0 }
    }

    /// Runs one check and prints `PASS name/check` or `FAIL name/check: why`. With
    /// `GPU_TEST_ONLY=text` set, only the checks whose name contains `text` run (to look at one
    /// check under a tool such as compute-sanitizer or cuda-gdb).
    pub fn check(&mut self, check: &str, f: impl FnOnce() -> Result<(), String>) {
        if std::env::var("GPU_TEST_ONLY").is_ok_and(|only| !check.contains(&only)) {
            return;
        }
        println!("RUN  {}/{check}", self.name);
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            Ok(Ok(())) => {
                self.passed += 1;
                println!("PASS {}/{check}", self.name);
            }
            Ok(Err(why)) => {
                self.failed += 1;
                println!("FAIL {}/{check}: {why}", self.name);
            }
            Err(_) => {
                self.failed += 1;
                println!("FAIL {}/{check}: panicked", self.name);
            }
        }
    }

    /// Runs what every check needs; when it fails, prints `FAIL name/setup: why` and the summary,
    /// and exits non-zero.
    pub fn setup<T>(&mut self, f: impl FnOnce() -> Result<T, String>) -> T {
        match f() {
            Ok(t) => t,
            Err(why) => {
                self.failed += 1;
                println!("FAIL {}/setup: {why}", self.name);
                self.exit()
            }
        }
    }

    /// The usual setup: device 0's context, its default stream, and the crate's module, loaded on
    /// that context by `load` (`kernels::load`).
    pub fn load<M, E: Display>(
        &mut self,
        load: impl FnOnce(&Arc<CudaContext>) -> Result<M, E>,
    ) -> (Arc<CudaContext>, Arc<CudaStream>, M) {
        self.setup(|| {
            let ctx = ck(CudaContext::new(0), "CudaContext::new(0)")?;
            let module = ck(load(&ctx), "kernels::load")?;
            let stream = ctx.default_stream();
            Ok((ctx, stream, module))
        })
    }

    /// Prints the summary and exits non-zero when any check failed.
    pub fn finish(self) -> ! {
        self.exit()
    }

    fn exit(&self) -> ! {
        println!("{}: {} passed, {} failed", self.name, self.passed, self.failed);
        std::process::exit(if self.failed == 0 && self.passed > 0 { 0 } else { 1 })
    }
}
