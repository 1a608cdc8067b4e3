//! The benchmarks: for each algorithm, random inputs and a float64 CPU reference, a check of
//! both kernels (output poisoned first), then interleaved timing of the kernels that passed.

use std::sync::Arc;

use cuda_core::{CudaContext, CudaStream, DeviceBuffer, DeviceCopy, LaunchConfig};

use crate::check::{Lcg, compare_exact, compare_f32, par_chunks};
use crate::kernels::{BLOCK_ROWS, TILE, kernels};
use crate::measure::{Arg, Launch, Nvcc, Stamp, Timing, ck, launch_nvcc, time_sides};

/// What the benchmark must do at least: bytes through device memory (each input read once, each
/// output written once) or floating-point operations.
#[derive(Clone, Copy)]
pub enum Work {
    Bytes(f64),
    Flops(f64),
}

/// One side's result.
pub enum Outcome {
    Timed(Timing),
    /// The check against the CPU failed: not timed.
    Wrong(String),
    /// No cubin (nvcc side only) or the launch could not be set up.
    Missing(String),
}

pub struct Row {
    pub name: &'static str,
    pub size: String,
    pub work: Work,
    /// How the inputs were laid out for timing (rotation over L2-sized sets, or why not).
    pub note: String,
    pub rust: Outcome,
    pub nvcc: Outcome,
    /// cuBLAS on the same problem (SGEMM only), for the "% of cuBLAS" column.
    pub cublas: Option<Outcome>,
}

/// Everything a benchmark needs.
pub struct Env<'a> {
    pub ctx: &'a Arc<CudaContext>,
    pub stream: &'a Arc<CudaStream>,
    pub rust: &'a kernels::Module,
    pub nvcc: Option<&'a Nvcc>,
    pub rng: Lcg,
    pub warmup: usize,
    pub reps: usize,
    pub l2: usize,
    /// Scale of the problem sizes (1 = the sizes in the README; smaller for a quick run).
    pub shift: u32,
}

impl Env<'_> {
    /// Input sets to rotate over so that every launch reads from memory, not from L2: enough
    /// that the sets together are 3× the L2 (at most 8).
    pub(crate) fn sets_for(&self, bytes_per_set: usize) -> usize {
        (3 * self.l2).div_ceil(bytes_per_set.max(1)).clamp(1, 8)
    }

    pub(crate) fn upload<T: DeviceCopy>(&self, data: &[T], what: &str) -> Result<DeviceBuffer<T>, String> {
        ck(DeviceBuffer::from_host(self.stream, data), &format!("copy {what} to the device"))
    }

    /// `n` copies of `src` (device to device), for rotation.
    pub(crate) fn replicate<T: DeviceCopy>(
        &self,
        src: &DeviceBuffer<T>,
        n: usize,
    ) -> Result<Vec<DeviceBuffer<T>>, String> {
        (0..n)
            .map(|_| {
                let mut b = ck(DeviceBuffer::<T>::zeroed(self.stream, src.len()), "allocate a rotation set")?;
                ck(b.copy_from(self.stream, src), "fill a rotation set")?;
                Ok(b)
            })
            .collect()
    }

    pub(crate) fn nvcc_fn(&self, file: &str, entry: &str) -> Result<cuda_core::Function, String> {
        match self.nvcc {
            Some(n) => n.function(file, entry),
            None => Err("no cubins (see bench/README.md)".into()),
        }
    }

    pub(crate) fn download<T: DeviceCopy>(&self, b: &DeviceBuffer<T>) -> Result<Vec<T>, String> {
        ck(self.stream.synchronize(), "synchronize after the checked launch (the kernel failed while running)")?;
        ck(b.to_host_vec(self.stream), "copy the result to the host")
    }

    /// Times the sides whose check passed; the others keep their failure.
    fn time(
        &self,
        rust_ok: Result<f64, String>,
        nvcc_ok: Result<f64, String>,
        rust: &mut Launch<'_>,
        nvcc: &mut Launch<'_>,
    ) -> Result<(Outcome, Outcome), String> {
        report_check("rust", &rust_ok);
        report_check("nvcc", &nvcc_ok);
        let t = time_sides(
            self.ctx,
            self.stream,
            self.warmup,
            self.reps,
            &mut [rust_ok.is_ok().then_some(rust), nvcc_ok.is_ok().then_some(nvcc)],
        )?;
        let outcome = |ok: Result<f64, String>, t: Option<Timing>| match (ok, t) {
            (Ok(_), Some(t)) => Outcome::Timed(t),
            (Err(e), _) if e.starts_with("no cubin") || e.contains(".cubin") => Outcome::Missing(e),
            (Err(e), _) => Outcome::Wrong(e),
            (Ok(_), None) => Outcome::Missing("not timed".into()),
        };
        Ok((outcome(rust_ok, t[0]), outcome(nvcc_ok, t[1])))
    }
}

fn report_check(side: &str, r: &Result<f64, String>) {
    match r {
        Ok(rel) => println!("    check {side}: OK (relative error {rel:.1e})"),
        Err(e) => println!("    check {side}: FAILED, not timed: {e}"),
    }
}

/// A side given as "enqueue one run on input set `k`"; the timing wraps it in CUDA events.
pub(crate) type Side<'a> = dyn FnMut(usize) -> Result<(), String> + 'a;

impl Env<'_> {
    /// The usual benchmark: each side is checked once on set 0 (`reset` poisons the outputs
    /// first, `check` compares them with the CPU), then both are timed, rotating over `sets`.
    pub(crate) fn run_sides(
        &self,
        sets: usize,
        reset: &mut dyn FnMut() -> Result<(), String>,
        check: &dyn Fn() -> Result<f64, String>,
        rust: &mut Side<'_>,
        nvcc: &mut Side<'_>,
    ) -> Result<(Outcome, Outcome), String> {
        let rust_ok = side_check(|| {
            reset()?;
            rust(0)?;
            check()
        });
        let nvcc_ok = side_check(|| {
            reset()?;
            nvcc(0)?;
            check()
        });
        let stream = self.stream;
        let mut r = |i: usize, s: &Stamp| s.around(stream, || rust(i % sets));
        let mut c = |i: usize, s: &Stamp| s.around(stream, || nvcc(i % sets));
        self.time(rust_ok, nvcc_ok, &mut r, &mut c)
    }
}

/// Runs `check` for one side, turning a setup error into the side's failure.
fn side_check(f: impl FnOnce() -> Result<f64, String>) -> Result<f64, String> {
    f()
}

pub(crate) const NAN: f32 = f32::NAN;

pub fn vecadd(env: &mut Env<'_>) -> Result<Row, String> {
    let n = 1usize << (26 - env.shift);
    let (a, b) = (env.rng.vec_f32(n), env.rng.vec_f32(n));
    let want: Vec<f64> = a.iter().zip(&b).map(|(&x, &y)| x as f64 + y as f64).collect();
    let tol = |i: usize| 1e-6 * (a[i].abs() + b[i].abs()) as f64;
    let sets = env.sets_for(12 * n);
    let (a0, b0) = (env.upload(&a, "a")?, env.upload(&b, "b")?);
    let (ad, bd) = (env.replicate(&a0, sets)?, env.replicate(&b0, sets)?);
    let poison = env.upload(&vec![NAN; n], "poison")?;
    let mut cd = env.replicate(&poison, sets)?;
    let cfg = LaunchConfig::for_num_elems(n as u32);
    let (stream, rust) = (env.stream, env.rust);

    let rust_ok = side_check(|| {
        ck(cd[0].copy_from(stream, &poison), "poison c")?;
        ck(rust.vecadd(stream, cfg, &ad[0], &bd[0], &mut cd[0]), "launch vecadd (rust)")?;
        compare_f32(&env.download(&cd[0])?, &want, tol, 1e-6)
    });
    let f = env.nvcc_fn("vecadd", "vecadd");
    let nvcc_ok = side_check(|| {
        let f = f.as_ref().map_err(Clone::clone)?;
        ck(cd[0].copy_from(stream, &poison), "poison c")?;
        launch_nvcc(f, stream, cfg, &[Arg::buf(&ad[0]), Arg::buf(&bd[0]), Arg::buf(&cd[0]), Arg::I32(n as i32)])?;
        compare_f32(&env.download(&cd[0])?, &want, tol, 1e-6)
    });
    let cd = std::cell::RefCell::new(cd);
    let mut r = |i: usize, s: &Stamp| {
        let k = i % sets;
        s.around(stream, || {
            ck(rust.vecadd(stream, cfg, &ad[k], &bd[k], &mut cd.borrow_mut()[k]), "launch vecadd (rust)")
        })
    };
    let mut c = |i: usize, s: &Stamp| {
        let (k, f) = (i % sets, f.as_ref().map_err(Clone::clone)?);
        let args = [Arg::buf(&ad[k]), Arg::buf(&bd[k]), Arg::buf(&cd.borrow()[k]), Arg::I32(n as i32)];
        s.around(stream, || launch_nvcc(f, stream, cfg, &args))
    };
    let (rust, nvcc) = env.time(rust_ok, nvcc_ok, &mut r, &mut c)?;
    Ok(Row {
        name: "vecadd",
        size: format!("2^{} f32", 26 - env.shift),
        work: Work::Bytes(12.0 * n as f64),
        note: rotation_note(sets, 12 * n),
        rust,
        nvcc,
        cublas: None,
    })
}

pub fn saxpy(env: &mut Env<'_>) -> Result<Row, String> {
    let n = 1usize << (26 - env.shift);
    let alpha = 1.5f32;
    let (x, y) = (env.rng.vec_f32(n), env.rng.vec_f32(n));
    let want: Vec<f64> = x.iter().zip(&y).map(|(&x, &y)| alpha as f64 * x as f64 + y as f64).collect();
    let tol = |i: usize| 1e-6 * (alpha.abs() * x[i].abs() + y[i].abs()) as f64;
    let sets = env.sets_for(12 * n);
    let (x0, y0) = (env.upload(&x, "x")?, env.upload(&y, "y")?);
    let (xd, mut yd) = (env.replicate(&x0, sets)?, env.replicate(&y0, sets)?);
    let cfg = LaunchConfig::for_num_elems(n as u32);
    let (stream, rust) = (env.stream, env.rust);

    // In place: y is restored from y0 before each check (y is the output; the input y is random,
    // so an unwritten element is caught by its value instead of by poison).
    let rust_ok = side_check(|| {
        ck(yd[0].copy_from(stream, &y0), "restore y")?;
        ck(rust.saxpy(stream, cfg, alpha, &xd[0], &mut yd[0]), "launch saxpy (rust)")?;
        compare_f32(&env.download(&yd[0])?, &want, tol, 1e-6)
    });
    let f = env.nvcc_fn("vecadd", "saxpy");
    let nvcc_ok = side_check(|| {
        let f = f.as_ref().map_err(Clone::clone)?;
        ck(yd[0].copy_from(stream, &y0), "restore y")?;
        launch_nvcc(f, stream, cfg, &[Arg::F32(alpha), Arg::buf(&xd[0]), Arg::buf(&yd[0]), Arg::I32(n as i32)])?;
        compare_f32(&env.download(&yd[0])?, &want, tol, 1e-6)
    });
    // Timing keeps updating y in place: y grows by alpha * x per launch, far from overflow.
    let yd = std::cell::RefCell::new(yd);
    let mut r = |i: usize, s: &Stamp| {
        let k = i % sets;
        s.around(stream, || ck(rust.saxpy(stream, cfg, alpha, &xd[k], &mut yd.borrow_mut()[k]), "launch saxpy (rust)"))
    };
    let mut c = |i: usize, s: &Stamp| {
        let (k, f) = (i % sets, f.as_ref().map_err(Clone::clone)?);
        let args = [Arg::F32(alpha), Arg::buf(&xd[k]), Arg::buf(&yd.borrow()[k]), Arg::I32(n as i32)];
        s.around(stream, || launch_nvcc(f, stream, cfg, &args))
    };
    let (rust, nvcc) = env.time(rust_ok, nvcc_ok, &mut r, &mut c)?;
    Ok(Row {
        name: "saxpy",
        size: format!("2^{} f32", 26 - env.shift),
        work: Work::Bytes(12.0 * n as f64),
        note: rotation_note(sets, 12 * n),
        rust,
        nvcc,
        cublas: None,
    })
}

pub fn reduce(env: &mut Env<'_>) -> Result<Row, String> {
    let n = 1usize << (26 - env.shift);
    let grid = env.ctx.sm_count() as usize * 8;
    let x = env.rng.vec_f32(n);
    // Element i is summed by block (i / 256) % grid (grid-stride loop, 256 threads per block).
    let (mut want, mut absum) = (vec![0f64; grid], vec![0f64; grid]);
    for (chunk, c) in x.chunks(256).enumerate() {
        want[chunk % grid] += c.iter().map(|&v| v as f64).sum::<f64>();
        absum[chunk % grid] += c.iter().map(|&v| v.abs() as f64).sum::<f64>();
    }
    let tol = |i: usize| 1e-5 * absum[i] + 1e-6;
    let sets = env.sets_for(4 * n);
    let x0 = env.upload(&x, "x")?;
    let xd = env.replicate(&x0, sets)?;
    let poison = env.upload(&vec![NAN; grid], "poison")?;
    let mut pd = env.upload(&vec![NAN; grid], "partials")?;
    let cfg = LaunchConfig { grid_dim: (grid as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (stream, rust) = (env.stream, env.rust);

    let rust_ok = side_check(|| {
        ck(pd.copy_from(stream, &poison), "poison partials")?;
        ck(rust.block_sum(stream, cfg, &xd[0], &mut pd), "launch block_sum (rust)")?;
        compare_f32(&env.download(&pd)?, &want, tol, 1e-5)
    });
    let f = env.nvcc_fn("reduce", "block_sum");
    let nvcc_ok = side_check(|| {
        let f = f.as_ref().map_err(Clone::clone)?;
        ck(pd.copy_from(stream, &poison), "poison partials")?;
        launch_nvcc(f, stream, cfg, &[Arg::buf(&xd[0]), Arg::buf(&pd), Arg::I32(n as i32)])?;
        compare_f32(&env.download(&pd)?, &want, tol, 1e-5)
    });
    let pd = std::cell::RefCell::new(pd);
    let mut r = |i: usize, s: &Stamp| {
        let k = i % sets;
        s.around(stream, || ck(rust.block_sum(stream, cfg, &xd[k], &mut pd.borrow_mut()), "launch block_sum (rust)"))
    };
    let mut c = |i: usize, s: &Stamp| {
        let (k, f) = (i % sets, f.as_ref().map_err(Clone::clone)?);
        let args = [Arg::buf(&xd[k]), Arg::buf(&pd.borrow()), Arg::I32(n as i32)];
        s.around(stream, || launch_nvcc(f, stream, cfg, &args))
    };
    let (rust, nvcc) = env.time(rust_ok, nvcc_ok, &mut r, &mut c)?;
    let size = format!("2^{} f32, {grid} blocks", 26 - env.shift);
    Ok(Row {
        name: "reduce",
        size,
        work: Work::Bytes(4.0 * n as f64),
        note: rotation_note(sets, 4 * n),
        rust,
        nvcc,
        cublas: None,
    })
}

pub fn transpose(env: &mut Env<'_>) -> Result<Row, String> {
    let (w, h) = (4096usize >> env.shift, 4096usize >> env.shift);
    let input = env.rng.vec_f32(w * h);
    let mut want = vec![0f64; w * h];
    for r in 0..h {
        for c in 0..w {
            want[c * h + r] = input[r * w + c] as f64;
        }
    }
    let sets = env.sets_for(8 * w * h);
    let in0 = env.upload(&input, "input")?;
    let ind = env.replicate(&in0, sets)?;
    let poison = env.upload(&vec![NAN; w * h], "poison")?;
    let mut outd = env.replicate(&poison, sets)?;
    let cfg = LaunchConfig {
        grid_dim: ((w / TILE) as u32, (h / TILE) as u32, 1),
        block_dim: (TILE as u32, BLOCK_ROWS as u32, 1),
        shared_mem_bytes: 0,
    };
    let (stream, rust) = (env.stream, env.rust);
    let (wu, hu) = (w as u32, h as u32);

    let rust_ok = side_check(|| {
        ck(outd[0].copy_from(stream, &poison), "poison out")?;
        ck(rust.transpose(stream, cfg, &ind[0], &mut outd[0], wu, hu), "launch transpose (rust)")?;
        compare_f32(&env.download(&outd[0])?, &want, |_| 0.0, 0.0)
    });
    let f = env.nvcc_fn("transpose", "transpose");
    let nvcc_ok = side_check(|| {
        let f = f.as_ref().map_err(Clone::clone)?;
        ck(outd[0].copy_from(stream, &poison), "poison out")?;
        launch_nvcc(f, stream, cfg, &[Arg::buf(&ind[0]), Arg::buf(&outd[0]), Arg::I32(w as i32), Arg::I32(h as i32)])?;
        compare_f32(&env.download(&outd[0])?, &want, |_| 0.0, 0.0)
    });
    let outd = std::cell::RefCell::new(outd);
    let mut r = |i: usize, s: &Stamp| {
        let k = i % sets;
        s.around(stream, || {
            ck(rust.transpose(stream, cfg, &ind[k], &mut outd.borrow_mut()[k], wu, hu), "launch transpose (rust)")
        })
    };
    let mut c = |i: usize, s: &Stamp| {
        let (k, f) = (i % sets, f.as_ref().map_err(Clone::clone)?);
        let args = [Arg::buf(&ind[k]), Arg::buf(&outd.borrow()[k]), Arg::I32(w as i32), Arg::I32(h as i32)];
        s.around(stream, || launch_nvcc(f, stream, cfg, &args))
    };
    let (rust, nvcc) = env.time(rust_ok, nvcc_ok, &mut r, &mut c)?;
    Ok(Row {
        name: "transpose",
        size: format!("{w}x{h} f32"),
        work: Work::Bytes(8.0 * (w * h) as f64),
        note: rotation_note(sets, 8 * w * h),
        rust,
        nvcc,
        cublas: None,
    })
}

pub fn histogram(env: &mut Env<'_>) -> Result<Row, String> {
    let n_words = 1usize << (26 - env.shift);
    let words = env.rng.vec_u32(n_words);
    let mut want = vec![0u32; 256];
    for w in &words {
        for b in w.to_le_bytes() {
            want[b as usize] += 1;
        }
    }
    let grid = env.ctx.sm_count() * 8;
    let sets = env.sets_for(4 * n_words);
    let w0 = env.upload(&words, "words")?;
    let wd = env.replicate(&w0, sets)?;
    let zero = env.upload(&[0u32; 256], "zero bins")?;
    let mut bins = env.upload(&[0u32; 256], "bins")?;
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (stream, rust) = (env.stream, env.rust);

    // The bins accumulate, so they are zeroed before every launch (outside the timed events).
    let rust_ok = side_check(|| {
        ck(bins.copy_from(stream, &zero), "zero bins")?;
        ck(rust.histogram(stream, cfg, &wd[0], &mut bins), "launch histogram (rust)")?;
        compare_exact(&env.download(&bins)?, &want)
    });
    let f = env.nvcc_fn("histogram", "histogram");
    let nvcc_ok = side_check(|| {
        let f = f.as_ref().map_err(Clone::clone)?;
        ck(bins.copy_from(stream, &zero), "zero bins")?;
        launch_nvcc(f, stream, cfg, &[Arg::buf(&wd[0]), Arg::buf(&bins), Arg::I32(n_words as i32)])?;
        compare_exact(&env.download(&bins)?, &want)
    });
    let bins = std::cell::RefCell::new(bins);
    let mut r = |i: usize, s: &Stamp| {
        let k = i % sets;
        ck(bins.borrow_mut().copy_from(stream, &zero), "zero bins")?;
        s.around(stream, || ck(rust.histogram(stream, cfg, &wd[k], &mut bins.borrow_mut()), "launch histogram (rust)"))
    };
    let mut c = |i: usize, s: &Stamp| {
        let (k, f) = (i % sets, f.as_ref().map_err(Clone::clone)?);
        ck(bins.borrow_mut().copy_from(stream, &zero), "zero bins")?;
        let args = [Arg::buf(&wd[k]), Arg::buf(&bins.borrow()), Arg::I32(n_words as i32)];
        s.around(stream, || launch_nvcc(f, stream, cfg, &args))
    };
    let (rust, nvcc) = env.time(rust_ok, nvcc_ok, &mut r, &mut c)?;
    let size = format!("2^{} bytes, {grid} blocks", 28 - env.shift);
    Ok(Row {
        name: "histogram",
        size,
        work: Work::Bytes(4.0 * n_words as f64),
        note: rotation_note(sets, 4 * n_words),
        rust,
        nvcc,
        cublas: None,
    })
}

pub fn sgemm(env: &mut Env<'_>) -> Result<Row, String> {
    let n = 2048usize >> env.shift;
    let (a, b) = (env.rng.vec_f32(n * n), env.rng.vec_f32(n * n));
    let b64: Vec<f64> = b.iter().map(|&v| v as f64).collect();
    let mut want = vec![0f64; n * n];
    par_chunks(&mut want, n, |row0, rows| {
        for (r, out) in rows.chunks_mut(n).enumerate() {
            let i = row0 + r;
            for k in 0..n {
                let aik = a[i * n + k] as f64;
                for (o, &bkj) in out.iter_mut().zip(&b64[k * n..(k + 1) * n]) {
                    *o += aik * bkj;
                }
            }
        }
    });
    // Products of numbers in [-1, 1): each element sums n terms, float32 rounding ~ sqrt(n) ulps.
    let tol = |_: usize| 1e-5 * n as f64;
    let (ad, bd) = (env.upload(&a, "a")?, env.upload(&b, "b")?);
    let poison = env.upload(&vec![NAN; n * n], "poison")?;
    let mut cd = env.upload(&vec![NAN; n * n], "c")?;
    let t = TILE as u32;
    let cfg = LaunchConfig { grid_dim: (n as u32 / t, n as u32 / t, 1), block_dim: (t, t, 1), shared_mem_bytes: 0 };
    let (stream, rust) = (env.stream, env.rust);

    let rust_ok = side_check(|| {
        ck(cd.copy_from(stream, &poison), "poison c")?;
        ck(rust.sgemm(stream, cfg, &ad, &bd, &mut cd, n as u32), "launch sgemm (rust)")?;
        compare_f32(&env.download(&cd)?, &want, tol, 1e-4)
    });
    let f = env.nvcc_fn("sgemm", "sgemm");
    let nvcc_ok = side_check(|| {
        let f = f.as_ref().map_err(Clone::clone)?;
        ck(cd.copy_from(stream, &poison), "poison c")?;
        launch_nvcc(f, stream, cfg, &[Arg::buf(&ad), Arg::buf(&bd), Arg::buf(&cd), Arg::I32(n as i32)])?;
        compare_f32(&env.download(&cd)?, &want, tol, 1e-4)
    });
    let cd = std::cell::RefCell::new(cd);
    let mut r = |_: usize, s: &Stamp| {
        s.around(stream, || {
            ck(rust.sgemm(stream, cfg, &ad, &bd, &mut cd.borrow_mut(), n as u32), "launch sgemm (rust)")
        })
    };
    let mut c = |_: usize, s: &Stamp| {
        let f = f.as_ref().map_err(Clone::clone)?;
        let args = [Arg::buf(&ad), Arg::buf(&bd), Arg::buf(&cd.borrow()), Arg::I32(n as i32)];
        s.around(stream, || launch_nvcc(f, stream, cfg, &args))
    };
    let (rust, nvcc) = env.time(rust_ok, nvcc_ok, &mut r, &mut c)?;
    let note = "one set: compute-bound, each input is re-read n/32 times from L2 by design".to_string();
    Ok(Row {
        name: "sgemm",
        size: format!("{n}^3 f32"),
        work: Work::Flops(2.0 * (n * n * n) as f64),
        note,
        rust,
        nvcc,
        cublas: None,
    })
}

pub(crate) fn rotation_note(sets: usize, bytes: usize) -> String {
    let mb = bytes as f64 / 1e6;
    if sets == 1 { format!("one set of {mb:.0} MB (over 3x L2)") } else { format!("{sets} sets of {mb:.0} MB rotated") }
}
