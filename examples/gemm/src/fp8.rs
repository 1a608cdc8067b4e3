//! The fp8 half of the example: E4M3 A and B with per-tensor scales, checked against float64
//! sums and cuBLASLt, timed against cuBLASLt (with and without fast accumulation).
use std::error::Error;
use std::sync::Arc;

use cuda_core::{CudaContext, CudaStream, DeviceBuffer};
use cuda_device::fp8::E4M3;
use cuda_device::half::Bf16x2;
use gemm::{Fp8Operands, Gemm, Variant};

use crate::cublaslt::Fp8Plan;
use crate::{Rng, at, distance, time};

/// A shape, then what the bf16 problems carry (alpha, bias: unused here) and whether every
/// entry is checked.
pub type Shape = ((usize, usize, usize), f32, bool, bool);

/// One fp8 problem on the host and the device.
struct Problem {
    m: usize,
    n: usize,
    k: usize,
    scales: (f32, f32),
    a: Vec<E4M3>,
    b: Vec<E4M3>,
}

impl Problem {
    /// C[i][j] in float64 from the fp8 inputs and scales, and the scale its error is measured
    /// against: |scale_a · scale_b| · Σ|products|.
    fn reference(&self, i: usize, j: usize) -> (f64, f64) {
        let (mut sum, mut abs) = (0f64, 0f64);
        for p in 0..self.k {
            let t = self.a[i * self.k + p].to_f32() as f64 * self.b[j * self.k + p].to_f32() as f64;
            sum += t;
            abs += t.abs();
        }
        let s = self.scales.0 as f64 * self.scales.1 as f64;
        (s * sum, s.abs() * abs + 1e-6)
    }
}

/// Checks `c` against float64 sums: every entry when `all`, else 2048 sampled ones, within
/// 2^-8 of the scale (bf16 rounding of C is at most 2^-9 of it).
fn check_reference(p: &Problem, c: &[Bf16x2], all: bool, rng: &mut Rng) -> Result<f64, String> {
    let entries: Vec<usize> = if all {
        (0..p.m * p.n).collect()
    } else {
        (0..2048).map(|_| (rng.next() % (p.m * p.n) as u64) as usize).collect()
    };
    let mut worst = 0f64;
    for idx in entries {
        let (i, j) = (idx / p.n, idx % p.n);
        let (want, scale) = p.reference(i, j);
        let got = at(c, idx);
        let err = (got - want).abs() / scale;
        if err.is_nan() || err > 2f64.powi(-8) {
            return Err(format!("C[{i}][{j}] = {got}, want {want} (error {err:.2e} of the scale {scale:.3e})"));
        }
        worst = worst.max(err);
    }
    Ok(worst)
}

/// Checks every fp8 variant on `shapes` (PASS/FAIL lines; `failed` counts failures), then times
/// the checked ones and cuBLASLt at the shapes of 4096 and more. Returns the table's rows.
#[allow(clippy::too_many_arguments)]
pub fn check_and_time(
    ctx: &Arc<CudaContext>,
    stream: &CudaStream,
    gemm: &Gemm,
    variants: &[Variant],
    shapes: &[Shape],
    reps: usize,
    rng: &mut Rng,
    failed: &mut usize,
) -> Result<Vec<Vec<String>>, Box<dyn Error>> {
    let mut table = Vec::new();
    if variants.is_empty() {
        return Ok(table);
    }
    let nan = Bf16x2::from_f32(f32::NAN, f32::NAN);
    for &((m, n, k), _, _, all) in shapes {
        let a: Vec<E4M3> = (0..m * k).map(|_| rng.e4m3()).collect();
        let b: Vec<E4M3> = (0..n * k).map(|_| rng.e4m3()).collect();
        let scales = (0.5 + 1.5 * (rng.uniform() + 1.0) / 2.0, 0.5 + 1.5 * (rng.uniform() + 1.0) / 2.0);
        let (ad, bd) = (DeviceBuffer::from_host(stream, &a)?, DeviceBuffer::from_host(stream, &b)?);
        let (sad, sbd) = (DeviceBuffer::from_host(stream, &[scales.0])?, DeviceBuffer::from_host(stream, &[scales.1])?);
        let p = Problem { m, n, k, scales, a, b };
        let ops = Fp8Operands::new(&ad, &bd, &sad, &sbd, (m, n, k))?;
        let mut c = DeviceBuffer::from_host(stream, &vec![nan; m * n / 2])?;
        let cb = DeviceBuffer::from_host(stream, &vec![nan; m * n / 2])?;
        let (ap, bp, sap, sbp) = (ad.as_device_ptr(), bd.as_device_ptr(), sad.as_device_ptr(), sbd.as_device_ptr());
        let plans =
            [true, false].map(|fast| Fp8Plan::new(stream, (m, n, k), fast, ap, bp, cb.as_device_ptr(), sap, sbp));
        // cuBLASLt's own result, checked like ours.
        let want = match &plans[0] {
            Ok(plan) => {
                plan.run()?;
                let w = cb.to_host_vec(stream)?;
                match check_reference(&p, &w, all, rng) {
                    Ok(worst) => println!("PASS cuBLASLt fp8 {m}x{n}x{k}: worst error {worst:.1e} of the scale"),
                    Err(e) => println!("(cuBLASLt fp8 {m}x{n}x{k} misses the reference: {e})"),
                }
                Some(w)
            }
            Err(e) => {
                println!("(cuBLASLt fp8 not available: {e}; its comparisons are skipped)");
                None
            }
        };
        let mut ok = Vec::new();
        for &variant in variants {
            let name = variant.fp8_name().unwrap_or("?");
            c.copy_from_host(stream, &vec![nan; m * n / 2])?;
            gemm.run_fp8(stream, variant, &ops, &mut c)?;
            let got = c.to_host_vec(stream)?;
            let what = format!("{name} {m}x{n}x{k} (scales {:.3}, {:.3})", scales.0, scales.1);
            let verdict = check_reference(&p, &got, all, rng).and_then(|worst| match &want {
                Some(w) => {
                    let d = distance(&got, w, m * n);
                    if d.is_nan() || d > 2f64.powi(-7) {
                        Err(format!("‖C − cuBLASLt‖/‖cuBLASLt‖ = {d:.2e}"))
                    } else {
                        Ok((worst, Some(d)))
                    }
                }
                None => Ok((worst, None)),
            });
            match verdict {
                Ok((worst, d)) => {
                    ok.push(variant);
                    println!(
                        "PASS {what}: {} entries, worst error {worst:.1e} of the scale{}",
                        if all { "all" } else { "2048 sampled" },
                        d.map_or(String::new(), |d| format!(", {d:.1e} from cuBLASLt"))
                    )
                }
                Err(e) => {
                    println!("FAIL {what}: {e}");
                    *failed += 1;
                }
            }
        }
        if m < 4096 {
            continue;
        }
        let flops = 2.0 * (m * n * k) as f64;
        let mut row = vec![format!("{m}^3")];
        let blas_ms: Vec<Option<f64>> = plans
            .iter()
            .map(|plan| match plan {
                Ok(plan) => time(ctx, stream, reps, || Ok(plan.run()?)).map(Some),
                Err(_) => Ok(None),
            })
            .collect::<Result<_, _>>()?;
        for &variant in variants {
            if !ok.contains(&variant) {
                row.push(format!("{:^24}", "FAILED"));
                continue;
            }
            let ms = time(ctx, stream, reps, || gemm.run_fp8(stream, variant, &ops, &mut c))?;
            let pct = blas_ms[0].map_or(String::new(), |b| format!(" {:>4.0}%", 100.0 * b / ms));
            row.push(format!("{:>7.3} ms {:>5.0} TF{pct}", ms, flops / ms / 1e9));
        }
        for b in blas_ms {
            row.push(b.map_or("-".into(), |b| format!("{b:.3} ms {:.0} TF", flops / b / 1e9)));
        }
        table.push(row);
    }
    Ok(table)
}
