//! Runs `attention::kernels` (build for `sm_90a`; an H100 or H200 runs them): checks O and the
//! log-sum-exp against a float64 CPU reference on sampled rows (the last rows of the last head
//! included) for d ∈ {64, 128} × causal ∈ {no, yes} on small and ragged sequences and on every
//! timed shape, then times the timed shapes (seq 1k, 4k, 8k, 16k; 16k tokens in all, 2048 / d
//! heads, as FlashAttention-3's paper measures) and prints TFLOP/s.
//!
//! Each shape runs both kernel variants: `pp=0` (the consumer warpgroups issue their wgmmas as
//! they come) and `pp=1` (ping-pong: they take turns).
//!
//! `attention [--no-time] [--reps N] [--seqs 1024,4096] [--d 64|128] [--causal 0|1] [--pp 0|1]
//! [--timed-only] [--static]` (`--d` … `--timed-only` narrow the run, e.g. for a profiler;
//! `--static`: units round-robin instead of from the global counter). Prints PASS/FAIL per check, one
//! `BENCH d=… causal=… seq=… batch=… heads=… pp=… ms=… tflops=…` line per timed shape (what
//! `bench/attention_compare.py` reads) and a table; exits 1 when a check fails or a CUDA call errs.
use std::error::Error;
use std::sync::Arc;

use attention::{Attention, Operands, Shape};
use cuda_core::{CudaContext, CudaEvent, CudaStream, DeviceBuffer};
use cuda_device::half::{Bf16x2, bf16};

/// xorshift64: reproducible inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn uniform(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    /// About N(0, σ²) (a sum of four uniforms), rounded to bf16.
    fn normal(&mut self, sigma: f32) -> bf16 {
        let s: f32 = (0..4).map(|_| self.uniform()).sum::<f32>() - 2.0;
        bf16::from_f32(s * 3f32.sqrt() * sigma)
    }
}

/// Q, K, V on the host and the device, sized for the largest shape that uses them.
struct Inputs {
    q: Vec<bf16>,
    k: Vec<bf16>,
    v: Vec<bf16>,
    qd: DeviceBuffer<bf16>,
    kd: DeviceBuffer<bf16>,
    vd: DeviceBuffer<bf16>,
}

impl Inputs {
    /// `n` random values each; Q with a larger spread, so that the softmax is peaked and the
    /// running max moves.
    fn new(stream: &CudaStream, rng: &mut Rng, n: usize) -> Result<Inputs, Box<dyn Error>> {
        let q: Vec<bf16> = (0..n).map(|_| rng.normal(1.5)).collect();
        let k: Vec<bf16> = (0..n).map(|_| rng.normal(1.0)).collect();
        let v: Vec<bf16> = (0..n).map(|_| rng.normal(1.0)).collect();
        let (qd, kd, vd) = (
            DeviceBuffer::from_host(stream, &q)?,
            DeviceBuffer::from_host(stream, &k)?,
            DeviceBuffer::from_host(stream, &v)?,
        );
        Ok(Inputs { q, k, v, qd, kd, vd })
    }

    /// Row `r` of head `h` (`h` counting batch · heads) of O and its lse, in float64.
    fn reference(&self, sh: Shape, h: usize, r: usize) -> (Vec<f64>, f64) {
        let d = sh.d;
        let row = |x: &[bf16], i: usize| -> Vec<f64> {
            x[(h * sh.seq + i) * d..(h * sh.seq + i + 1) * d].iter().map(|v| v.to_f32() as f64).collect()
        };
        let q = row(&self.q, r);
        let keys = if sh.causal { r + 1 } else { sh.seq };
        let scale = 1.0 / (d as f64).sqrt();
        let s: Vec<f64> =
            (0..keys).map(|j| row(&self.k, j).iter().zip(&q).map(|(a, b)| a * b).sum::<f64>() * scale).collect();
        let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let mut o = vec![0f64; d];
        let mut l = 0f64;
        for (j, sj) in s.iter().enumerate() {
            let p = (sj - m).exp();
            l += p;
            for (oc, vc) in o.iter_mut().zip(row(&self.v, j)) {
                *oc += p * vc;
            }
        }
        o.iter_mut().for_each(|x| *x /= l);
        (o, m + l.ln())
    }
}

/// Checks `o` and `lse` of `sh` on 64 sampled rows (the last row of the last head, the last
/// rows of other heads, random rows): ‖O − ref‖ / ‖ref‖ ≤ 2^-7 over those rows, every value
/// within 2^-7 of its row's largest |ref| plus 2^-7 of itself, every lse within 2e-3.
fn check(inputs: &Inputs, sh: Shape, o: &[Bf16x2], lse: &[f32], rng: &mut Rng) -> Result<String, String> {
    let heads = sh.batch * sh.heads;
    let mut rows: Vec<(usize, usize)> = vec![(heads - 1, sh.seq - 1), (0, sh.seq - 1), (heads / 2, sh.seq / 2)];
    while rows.len() < 64 {
        let h = rng.next() as usize % heads;
        let r = if rows.len() < 8 {
            sh.seq - 1 - rng.next() as usize % sh.seq.min(130)
        } else {
            rng.next() as usize % sh.seq
        };
        rows.push((h, r));
    }
    let (mut diff, mut norm, mut worst_lse) = (0f64, 0f64, 0f64);
    for (h, r) in rows {
        let (want, want_lse) = inputs.reference(sh, h, r);
        let at = (h * sh.seq + r) * sh.d;
        let big = want.iter().fold(0f64, |a, x| a.max(x.abs()));
        for (c, w) in want.iter().enumerate() {
            let (lo, hi) = o[(at + c) / 2].to_f32();
            let got = if c % 2 == 0 { lo } else { hi } as f64;
            let err = (got - w).abs();
            if err.is_nan() || err > (big + w.abs()) / 128.0 {
                return Err(format!("O[head {h}][row {r}][{c}] = {got}, want {w}"));
            }
            diff += err * err;
            norm += w * w;
        }
        let got_lse = lse[h * sh.seq + r] as f64;
        let e = (got_lse - want_lse).abs();
        if e.is_nan() || e > 2e-3 {
            return Err(format!("lse[head {h}][row {r}] = {got_lse}, want {want_lse}"));
        }
        worst_lse = worst_lse.max(e);
    }
    let rel = (diff / norm).sqrt();
    if rel > 1.0 / 128.0 {
        return Err(format!("‖O − ref‖/‖ref‖ = {rel:.2e} over the sampled rows"));
    }
    Ok(format!("‖O − ref‖/‖ref‖ {rel:.1e}, worst lse error {worst_lse:.1e}"))
}

/// Median milliseconds of `reps` launches of `run`, each between two events, after 3 warm-ups.
fn time(
    ctx: &Arc<CudaContext>,
    stream: &CudaStream,
    reps: usize,
    mut run: impl FnMut() -> Result<(), Box<dyn Error>>,
) -> Result<f64, Box<dyn Error>> {
    for _ in 0..3 {
        run()?;
    }
    let events: Vec<(CudaEvent, CudaEvent)> = (0..reps)
        .map(|_| Ok((CudaEvent::new(ctx)?, CudaEvent::new(ctx)?)))
        .collect::<Result<_, cuda_core::DriverError>>()?;
    for (start, stop) in &events {
        start.record(stream)?;
        run()?;
        stop.record(stream)?;
    }
    stream.synchronize()?;
    let mut ms: Vec<f64> = events.iter().map(|(a, b)| a.elapsed_ms(b).map(f64::from)).collect::<Result<_, _>>()?;
    ms.sort_by(f64::total_cmp);
    Ok(ms[ms.len() / 2])
}

fn main() {
    if let Err(e) = run() {
        println!("FAIL attention: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1));
    let timing = !args.iter().any(|a| a == "--no-time");
    let reps = value("--reps").map_or(Ok(20), |s| s.parse())?;
    let seqs: Vec<usize> = match value("--seqs") {
        Some(s) => s.split(',').map(|x| x.parse()).collect::<Result<_, _>>()?,
        None => vec![1024, 4096, 8192, 16384],
    };
    let only = |flag: &str, v: usize| value(flag).is_none_or(|x| x.parse() == Ok(v));
    let timed_only = args.iter().any(|a| a == "--timed-only");
    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let mut attn =
        Attention::new(&ctx).map_err(|e| format!("load the kernels (an sm_90 GPU, built for sm_90a): {e}"))?;
    attn.dynamic = !args.iter().any(|a| a == "--static");
    let seed =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64) | 1;
    println!("attention on {} ({} SMs), seed {seed:#x}", ctx.name(), ctx.sm_count());
    let mut rng = Rng(seed);
    let (mut failed, mut table) = (0, Vec::new());
    // The timed shapes: 16k tokens (batch = 16384 / seq), 2048 / d heads.
    const TOKENS: usize = 16384;
    for d in [64, 128].into_iter().filter(|&d| only("--d", d)) {
        let heads = 2048 / d;
        let inputs = Inputs::new(&stream, &mut rng, TOKENS * heads * d)?;
        let mut o = DeviceBuffer::from_host(&stream, &vec![Bf16x2::from_f32(0.0, 0.0); TOKENS * heads * d / 2])?;
        let mut lse = DeviceBuffer::from_host(&stream, &vec![0f32; TOKENS * heads])?;
        let small: &[(usize, usize, usize)] =
            if timed_only { &[] } else { &[(1, 2, 128), (2, 3, 200), (1, 2, 1000), (2, 1, 2048), (1, 3, 77)] };
        let timed: Vec<(usize, usize, usize)> = seqs.iter().map(|&s| (TOKENS.div_ceil(s), heads, s)).collect();
        for (i, &(batch, heads, seq)) in small.iter().chain(&timed).enumerate() {
            let variants = [false, true].into_iter().filter(|&pp| only("--pp", pp as usize));
            for (causal, pp) in [false, true]
                .into_iter()
                .filter(|&c| only("--causal", c as usize))
                .flat_map(|c| variants.clone().map(move |pp| (c, pp)))
            {
                attn.pingpong = pp;
                let sh = Shape { batch, heads, seq, d, causal };
                let ops = Operands::new(sh, &inputs.qd, &inputs.kd, &inputs.vd)?;
                o.copy_from_host(&stream, &vec![Bf16x2::from_f32(f32::NAN, f32::NAN); o.len()])?;
                lse.copy_from_host(&stream, &vec![f32::NAN; lse.len()])?;
                attn.run(&stream, &ops, &mut o, &mut lse)?;
                stream.synchronize()?;
                let (oh, lh) = (o.to_host_vec(&stream)?, lse.to_host_vec(&stream)?);
                let what = format!("d={d} causal={} b={batch} h={heads} seq={seq} pp={}", causal as u32, pp as u32);
                match check(&inputs, sh, &oh, &lh, &mut rng) {
                    Ok(msg) => println!("PASS {what}: {msg}"),
                    Err(e) => {
                        println!("FAIL {what}: {e}");
                        failed += 1;
                        continue;
                    }
                }
                if !timing || i < small.len() {
                    continue;
                }
                let ms = time(&ctx, &stream, reps, || attn.run(&stream, &ops, &mut o, &mut lse))?;
                let tflops = sh.flops() / ms / 1e9;
                println!(
                    "BENCH d={d} causal={} seq={seq} batch={batch} heads={heads} pp={} ms={ms:.4} tflops={tflops:.1}",
                    causal as u32, pp as u32
                );
                table.push(format!(
                    "{d:>4} {:>6} {seq:>6} {batch:>3}x{heads:<3} {:>3} {ms:>9.3} {tflops:>8.1}",
                    causal, pp as u32
                ));
            }
        }
    }
    if !table.is_empty() {
        println!("\n   d causal    seq   b x h    pp        ms  TFLOP/s   (median of {reps})");
        for row in &table {
            println!("{row}");
        }
    }
    if failed > 0 {
        return Err(format!("{failed} checks failed").into());
    }
    Ok(())
}
