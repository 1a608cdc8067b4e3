//! The fp8 half of the example: E4M3 A and B with per-tensor scales, checked against float64
//! sums and cuBLASLt, timed against cuBLASLt (with and without fast accumulation).
use std::error::Error;
use std::sync::Arc;

use cuda_core::{CudaContext, CudaStream, DeviceBuffer};
use cuda_device::fp8::E4M3;
use cuda_device::half::Bf16x2;
use gemm::{Fp8Operands, Gemm, Variant};

use crate::cublaslt::Fp8Plan;
use crate::{Reference, Rng, check, check_reference, time_all};

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

impl Reference for Problem {
    fn mn(&self) -> (usize, usize) {
        (self.m, self.n)
    }
    fn reference(&self, i: usize, j: usize) -> (f64, f64) {
        Problem::reference(self, i, j)
    }
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
            // fp8 products are exact in f32; the two accumulate in different orders.
            let library = want.as_deref().map(|w| (w, 2f64.powi(-7), "cuBLASLt"));
            if check(&p, &what, &got, library, all, rng) {
                ok.push(variant);
            } else {
                *failed += 1;
            }
        }
        if m < 4096 {
            continue;
        }
        let flops = 2.0 * (m * n * k) as f64;
        let mut row = vec![format!("{m}^3")];
        // The checked kernels, then cuBLASLt's plans (fast accumulation, then not), interleaved.
        let plans: Vec<&Fp8Plan> = plans.iter().filter_map(|p| p.as_ref().ok()).collect();
        let ms = time_all(ctx, stream, reps, ok.len() + plans.len(), |i| match ok.get(i) {
            Some(&v) => gemm.run_fp8(stream, v, &ops, &mut c),
            None => Ok(plans[i - ok.len()].run()?),
        })?;
        let (ours, theirs) = ms.split_at(ok.len());
        for &variant in variants {
            match ok.iter().position(|&v| v == variant) {
                Some(i) => {
                    let pct = theirs.first().map_or(String::new(), |b| format!(" {:>4.0}%", 100.0 * b / ours[i]));
                    row.push(format!("{:>7.3} ms {:>5.0} TF{pct}", ours[i], flops / ours[i] / 1e9));
                }
                None => row.push(format!("{:^24}", "FAILED")),
            }
        }
        for b in theirs {
            row.push(format!("{b:.3} ms {:.0} TF", flops / b / 1e9));
        }
        for _ in theirs.len()..2 {
            row.push("-".into());
        }
        table.push(row);
    }
    Ok(table)
}
