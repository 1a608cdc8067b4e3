//! Shared by the GPU test crates (`#[path = "../../harness.rs"] mod harness;`): reproducible
//! random inputs, checked CUDA calls, and one PASS/FAIL line per check with a non-zero exit on failure.
#![allow(dead_code)]

use std::fmt::Display;

/// A 64-bit LCG (Knuth's MMIX constants): reproducible inputs without a dependency.
pub struct Lcg(pub u64);

impl Lcg {
    /// Seeded from the clock (printed, so a failure can be replayed with `GPU_TEST_SEED`).
    pub fn from_env_or_clock() -> Lcg {
        let seed = std::env::var("GPU_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
        });
        println!("seed {seed} (set GPU_TEST_SEED to replay)");
        Lcg(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let x = self.0;
        // xorshift the output: the LCG's low bits alone are weak.
        x ^ (x >> 29) ^ (x << 17)
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

/// Compares element by element (bit for bit with `eq`), describing the first mismatch.
pub fn compare<T: std::fmt::Debug>(what: &str, got: &[T], want: &[T], eq: impl Fn(&T, &T) -> bool) -> Result<(), String> {
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

    /// Runs one check and prints `PASS name/check` or `FAIL name/check: why`.
    pub fn check(&mut self, check: &str, f: impl FnOnce() -> Result<(), String>) {
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

    /// Prints the summary and exits non-zero when any check failed.
    pub fn finish(self) -> ! {
        println!("{}: {} passed, {} failed", self.name, self.passed, self.failed);
        std::process::exit(if self.failed == 0 && self.passed > 0 { 0 } else { 1 })
    }
}
