//! Benchmarks that walk rows and neighbourhoods: row softmax and layer normalisation (one block
//! per row of 1024, block reductions) and the 2D 5-point stencil on doubles.

use std::cell::RefCell;

use cuda_core::LaunchConfig;

use crate::benches::{Env, NAN, Row, Work, rotation_note};
use crate::check::{compare_f32, par_chunks};
use crate::kernels::ROW;
use crate::measure::{Arg, ck, launch_nvcc};

/// `rows × ROW` for the row benchmarks: 64 MB of f32 at full size.
fn rows(env: &Env<'_>) -> usize {
    1usize << (14 - env.shift)
}

pub fn softmax(env: &mut Env<'_>) -> Result<Row, String> {
    let rows = rows(env);
    let n = rows * ROW;
    let x = env.rng.vec_f32(n);
    let mut want = vec![0f64; n];
    par_chunks(&mut want, ROW, |r0, out| {
        for (r, o) in out.chunks_mut(ROW).enumerate() {
            let row = &x[(r0 + r) * ROW..(r0 + r + 1) * ROW];
            let m = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)) as f64;
            let s: f64 = row.iter().map(|&v| (v as f64 - m).exp()).sum();
            for (o, &v) in o.iter_mut().zip(row) {
                *o = (v as f64 - m).exp() / s;
            }
        }
    });
    let tol = |i: usize| 1e-5 * want[i] + 1e-9;
    run_rows(env, "softmax", x, &want, &tol, None)
}

pub fn layernorm(env: &mut Env<'_>) -> Result<Row, String> {
    let rows = rows(env);
    let n = rows * ROW;
    let x = env.rng.vec_f32(n);
    let mut want = vec![0f64; n];
    let gamma: Vec<f32> = (0..ROW).map(|c| 0.5 + (c % 7) as f32 * 0.25).collect();
    let beta: Vec<f32> = (0..ROW).map(|c| (c % 5) as f32 * 0.1 - 0.2).collect();
    par_chunks(&mut want, ROW, |r0, out| {
        for (r, o) in out.chunks_mut(ROW).enumerate() {
            let row = &x[(r0 + r) * ROW..(r0 + r + 1) * ROW];
            let mean = row.iter().map(|&v| v as f64).sum::<f64>() / ROW as f64;
            let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / ROW as f64;
            let rstd = 1.0 / (var + 1e-5).sqrt();
            for (c, (o, &v)) in o.iter_mut().zip(row).enumerate() {
                *o = (v as f64 - mean) * rstd * gamma[c] as f64 + beta[c] as f64;
            }
        }
    });
    let tol = |i: usize| 1e-4 * want[i].abs() + 1e-5;
    let params = (env.upload(&gamma, "gamma")?, env.upload(&beta, "beta")?);
    run_rows(env, "layernorm", x, &want, &tol, Some(params))
}

/// Shared by softmax (`params` None) and layernorm (`gamma`, `beta`).
fn run_rows(
    env: &mut Env<'_>,
    name: &'static str,
    x: Vec<f32>,
    want: &[f64],
    tol: &dyn Fn(usize) -> f64,
    params: Option<(cuda_core::DeviceBuffer<f32>, cuda_core::DeviceBuffer<f32>)>,
) -> Result<Row, String> {
    let n = x.len();
    let rows = n / ROW;
    let sets = env.sets_for(8 * n);
    let x0 = env.upload(&x, "x")?;
    let xd = env.replicate(&x0, sets)?;
    let poison = env.upload(&vec![NAN; n], "poison")?;
    let yd = RefCell::new(env.replicate(&poison, sets)?);
    let y_ptrs: Vec<u64> = yd.borrow().iter().map(|b| b.as_device_ptr()).collect();
    let cfg = LaunchConfig { grid_dim: (rows as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (stream, rust) = (env.stream, env.rust);
    let f = env.nvcc_fn("rows", name);
    let mut reset = || ck(yd.borrow_mut()[0].copy_from(stream, &poison), "poison y");
    let check = || compare_f32(&env.download(&yd.borrow()[0])?, want, tol, 1e-4);
    let mut r = |k: usize| match &params {
        None => ck(rust.softmax(stream, cfg, &xd[k], &mut yd.borrow_mut()[k]), "launch softmax (rust)"),
        Some((g, b)) => {
            ck(rust.layernorm(stream, cfg, &xd[k], g, b, &mut yd.borrow_mut()[k]), "launch layernorm (rust)")
        }
    };
    let mut c = |k: usize| {
        let f = f.as_ref().map_err(Clone::clone)?;
        match &params {
            None => launch_nvcc(f, stream, cfg, &[Arg::buf(&xd[k]), Arg::Ptr(y_ptrs[k])]),
            Some((g, b)) => {
                launch_nvcc(f, stream, cfg, &[Arg::buf(&xd[k]), Arg::buf(g), Arg::buf(b), Arg::Ptr(y_ptrs[k])])
            }
        }
    };
    let (rust, nvcc) = env.run_sides(sets, &mut reset, &check, &mut r, &mut c)?;
    Ok(Row {
        name,
        size: format!("{rows}x{ROW} f32"),
        work: Work::Bytes(8.0 * n as f64),
        note: rotation_note(sets, 8 * n),
        rust,
        nvcc,
        cublas: None,
    })
}

pub fn stencil(env: &mut Env<'_>) -> Result<Row, String> {
    let dim = 4096usize >> env.shift;
    let n = dim * dim;
    let input: Vec<f64> = (0..n).map(|_| env.rng.next_f32() as f64).collect();
    let (c0, c1) = (0.6, 0.1);
    let mut want = vec![0f64; n];
    par_chunks(&mut want, dim, |r0, out| {
        for (r, o) in out.chunks_mut(dim).enumerate() {
            let y = r0 + r;
            for (x, o) in o.iter_mut().enumerate() {
                let c = y * dim + x;
                *o = if x == 0 || y == 0 || x == dim - 1 || y == dim - 1 {
                    input[c]
                } else {
                    c0 * input[c] + c1 * (input[c - dim] + input[c + dim] + input[c - 1] + input[c + 1])
                };
            }
        }
    });
    let sets = env.sets_for(16 * n);
    let in0 = env.upload(&input, "input")?;
    let ind = env.replicate(&in0, sets)?;
    let poison = env.upload(&vec![f64::NAN; n], "poison")?;
    let outd = RefCell::new(env.replicate(&poison, sets)?);
    let out_ptrs: Vec<u64> = outd.borrow().iter().map(|b| b.as_device_ptr()).collect();
    let cfg =
        LaunchConfig { grid_dim: (dim as u32 / 32, dim as u32 / 8, 1), block_dim: (32, 8, 1), shared_mem_bytes: 0 };
    let (stream, rust) = (env.stream, env.rust);
    let f = env.nvcc_fn("stencil", "stencil5");
    let mut reset = || ck(outd.borrow_mut()[0].copy_from(stream, &poison), "poison out");
    let check = || {
        let got = env.download(&outd.borrow()[0])?;
        if let Some(i) =
            (0..n).find(|&i| !got[i].is_finite() || (got[i] - want[i]).abs() > 1e-12 * (1.0 + want[i].abs()))
        {
            return Err(format!("element {i}: gpu {} cpu {}", got[i], want[i]));
        }
        Ok(0.0)
    };
    let mut r = |k: usize| {
        ck(rust.stencil5(stream, cfg, &ind[k], &mut outd.borrow_mut()[k], dim as u32, c0, c1), "launch stencil5 (rust)")
    };
    let mut c = |k: usize| {
        let f = f.as_ref().map_err(Clone::clone)?;
        let args = [Arg::buf(&ind[k]), Arg::Ptr(out_ptrs[k]), Arg::I32(dim as i32), Arg::F64(c0), Arg::F64(c1)];
        launch_nvcc(f, stream, cfg, &args)
    };
    let (rust, nvcc) = env.run_sides(sets, &mut reset, &check, &mut r, &mut c)?;
    Ok(Row {
        name: "stencil5",
        size: format!("{dim}x{dim} f64"),
        work: Work::Bytes(16.0 * n as f64),
        note: rotation_note(sets, 16 * n),
        rust,
        nvcc,
        cublas: None,
    })
}
