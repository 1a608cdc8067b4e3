//! Random inputs and the comparison with a CPU reference that every benchmark passes before it
//! is timed.

/// A 64-bit LCG (Knuth's MMIX constants) with an xorshift output: reproducible inputs, no dependency.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let x = self.0;
        x ^ (x >> 29) ^ (x << 17)
    }

    /// A float in [-1, 1).
    pub fn next_f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    pub fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.next_f32()).collect()
    }

    pub fn vec_u32(&mut self, n: usize) -> Vec<u32> {
        (0..n).map(|_| (self.next_u64() >> 32) as u32).collect()
    }
}

/// Compares `got` with the float64 reference `want`: fails on any non-finite value (the NaN
/// poison of an unwritten element), on any element off by more than `tol(i)`, or when
/// ‖got − want‖ / ‖want‖ exceeds `max_rel`. Returns the relative error for the report.
pub fn compare_f32(got: &[f32], want: &[f64], tol: impl Fn(usize) -> f64, max_rel: f64) -> Result<f64, String> {
    if got.len() != want.len() {
        return Err(format!("{} elements, expected {}", got.len(), want.len()));
    }
    let (mut diff2, mut ref2, mut bad, mut first_bad) = (0f64, 0f64, 0usize, None);
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let g = g as f64;
        let d = g - w;
        if !g.is_finite() || d.abs() > tol(i) {
            bad += 1;
            first_bad.get_or_insert(i);
        }
        diff2 += d * d;
        ref2 += w * w;
    }
    let rel = if ref2 > 0.0 { (diff2 / ref2).sqrt() } else { diff2.sqrt() };
    if let Some(i) = first_bad {
        return Err(format!(
            "{bad} of {} elements wrong or unwritten; first at {i}: gpu {} cpu {} (tolerance {:.3e})",
            got.len(),
            got[i],
            want[i],
            tol(i)
        ));
    }
    if rel.is_nan() || rel > max_rel {
        return Err(format!("relative error {rel:.3e} > {max_rel:.0e}"));
    }
    Ok(rel)
}

/// Exact comparison for integer results.
pub fn compare_exact(got: &[u32], want: &[u32]) -> Result<f64, String> {
    if got.len() != want.len() {
        return Err(format!("{} elements, expected {}", got.len(), want.len()));
    }
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    match bad.first() {
        None => Ok(0.0),
        Some(&i) => {
            Err(format!("{} of {} values differ; first at {i}: gpu {} cpu {}", bad.len(), got.len(), got[i], want[i]))
        }
    }
}

/// Runs `f(range)` over `0..n` split into one chunk per CPU core, for the larger references.
pub fn par_chunks<T: Send>(out: &mut [T], chunk_rows: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let rows = out.len() / chunk_rows;
    let per = rows.div_ceil(threads).max(1) * chunk_rows;
    std::thread::scope(|s| {
        for (c, chunk) in out.chunks_mut(per).enumerate() {
            let f = &f;
            s.spawn(move || f(c * per / chunk_rows, chunk));
        }
    });
}
