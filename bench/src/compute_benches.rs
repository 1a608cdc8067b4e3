//! Arithmetic-bound benchmarks: all-pairs n-body on `F32x4` bodies, attention (f32, online
//! softmax), and the register-blocked SGEMM, also timed against cuBLAS in the same run.

use std::cell::RefCell;

use cuda_core::LaunchConfig;
use cuda_core::tma::{TensorMap, TmaElement, TmaSwizzle};
use cuda_device::fp8::E4M3;
use cuda_device::half::{Bf16x2, bf16};
use cuda_device::vector::F32x4;
use gemm::Layout;
use gemm_mma::BM as MMA_BM;
use gemm_wgmma_tma::{BK as WG_BK, BM as WG_BM, SMEM_BYTES as WG_SMEM_BYTES};

use crate::benches::{Env, NAN, Outcome, Row, Work};
use crate::check::Lcg;
use crate::cublas::Cublas;
use crate::kernels::{ATT_D, ATT_TILE, BM, NBODY_TILE};
use crate::measure::{Arg, Stamp, ck, launch_nvcc, time_sides};

/// Relative error of `got` against a float64 `want` with an absolute floor, over sampled entries.
fn sampled(got: &[f32], want: &[(usize, f64, f64)], rel: f64) -> Result<f64, String> {
    let mut worst = 0f64;
    for &(i, w, scale) in want {
        let g = got[i] as f64;
        let err = (g - w).abs() / scale;
        if !g.is_finite() || err > rel {
            return Err(format!(
                "element {i}: gpu {g} cpu {w} (error {err:.2e} of the scale {scale:.3e}, allowed {rel:.0e})"
            ));
        }
        worst = worst.max(err);
    }
    Ok(worst)
}

pub fn nbody(env: &mut Env<'_>) -> Result<Row, String> {
    let n = 32768usize >> env.shift;
    let eps2 = 1e-3f32;
    let pos: Vec<F32x4> = (0..n)
        .map(|_| {
            let r = &mut env.rng;
            F32x4::new([r.next_f32(), r.next_f32(), r.next_f32(), 0.5 + 0.5 * r.next_f32().abs()])
        })
        .collect();
    // CPU check on 512 sampled bodies, each against all n (float64).
    let mut pick = Lcg(env.rng.next_u64());
    let want: Vec<(usize, f64, f64)> = (0..512)
        .flat_map(|_| {
            let i = (pick.next_u64() % n as u64) as usize;
            let me = pos[i].to_array().map(|v| v as f64);
            let (mut a, mut scale) = ([0f64; 3], 0f64);
            for q in &pos {
                let q = q.to_array().map(|v| v as f64);
                let d = [q[0] - me[0], q[1] - me[1], q[2] - me[2]];
                let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2 as f64;
                let s = q[3] / (d2 * d2.sqrt());
                for c in 0..3 {
                    a[c] += d[c] * s;
                    scale += (d[c] * s).abs();
                }
            }
            (0..3).map(move |c| (4 * i + c, a[c], scale / 3.0 + 1e-6))
        })
        .collect();
    let posd = env.upload(&pos, "positions")?;
    let poison = env.upload(&vec![F32x4::splat(NAN); n], "poison")?;
    let accd = RefCell::new(env.upload(&vec![F32x4::splat(NAN); n], "accelerations")?);
    let acc_ptr = accd.borrow().as_device_ptr();
    let t = NBODY_TILE as u32;
    let cfg = LaunchConfig { grid_dim: (n as u32 / t, 1, 1), block_dim: (t, 1, 1), shared_mem_bytes: 0 };
    let (stream, rust) = (env.stream, env.rust);
    let f = env.nvcc_fn("nbody", "nbody");
    let mut reset = || ck(accd.borrow_mut().copy_from(stream, &poison), "poison accelerations");
    let check = || {
        let got: Vec<f32> = env.download(&accd.borrow())?.iter().flat_map(|v| v.to_array()).collect();
        // rsqrt.approx (2 ulp) and float32 sums of n terms.
        sampled(&got, &want, 1e-4)
    };
    let mut r = |_: usize| ck(rust.nbody(stream, cfg, &posd, &mut accd.borrow_mut(), eps2), "launch nbody (rust)");
    let mut c = |_: usize| {
        let f = f.as_ref().map_err(Clone::clone)?;
        launch_nvcc(f, stream, cfg, &[Arg::buf(&posd), Arg::Ptr(acc_ptr), Arg::I32(n as i32), Arg::F32(eps2)])
    };
    let (rust, nvcc) = env.run_sides(1, &mut reset, &check, &mut r, &mut c)?;
    Ok(Row {
        name: "nbody",
        size: format!("{n} bodies, F32x4"),
        // 20 FLOP per interaction, the usual count (rsqrt as 1).
        work: Work::Flops(20.0 * (n * n) as f64),
        note: "one set: 512 KB of bodies, compute-bound".into(),
        rust,
        nvcc,
        cublas: None,
    })
}

pub fn sgemm128(env: &mut Env<'_>) -> Result<Row, String> {
    let dim = 4096usize >> env.shift;
    let (m, n, k) = (dim, dim, dim);
    let (a, b) = (env.rng.vec_f32(m * k), env.rng.vec_f32(k * n));
    // CPU check on 1024 sampled entries (float64 dot products).
    let mut pick = Lcg(env.rng.next_u64());
    let want: Vec<(usize, f64, f64)> = (0..1024)
        .map(|_| {
            let (i, j) = ((pick.next_u64() % m as u64) as usize, (pick.next_u64() % n as u64) as usize);
            let (mut s, mut scale) = (0f64, 0f64);
            for p in 0..k {
                let t = a[i * k + p] as f64 * b[p * n + j] as f64;
                s += t;
                scale += t.abs();
            }
            (i * n + j, s, scale + 1e-6)
        })
        .collect();
    let pack = |v: &[f32]| -> Vec<F32x4> { v.chunks_exact(4).map(|c| F32x4::new([c[0], c[1], c[2], c[3]])).collect() };
    let (ad, bd) = (env.upload(&pack(&a), "a")?, env.upload(&pack(&b), "b")?);
    let poison = env.upload(&vec![F32x4::splat(NAN); m * n / 4], "poison")?;
    let cd = RefCell::new(env.upload(&vec![F32x4::splat(NAN); m * n / 4], "c")?);
    let c_ptr = cd.borrow().as_device_ptr();
    let cfg =
        LaunchConfig { grid_dim: ((n / BM) as u32, (m / BM) as u32, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (stream, rust) = (env.stream, env.rust);
    let f = env.nvcc_fn("sgemm128", "sgemm128");
    let blas = Cublas::new(stream);
    let check = || {
        let got: Vec<f32> = env.download(&cd.borrow())?.iter().flat_map(|v| v.to_array()).collect();
        // float32 accumulation of k products: about sqrt(k) roundings of the magnitude.
        sampled(&got, &want, 1e-5 * (k as f64).sqrt())
    };
    let reset = || ck(cd.borrow_mut().copy_from(stream, &poison), "poison c");
    let mut r = |_: usize| {
        let (mu, nu, ku) = (m as u32, n as u32, k as u32);
        ck(rust.sgemm128(stream, cfg, &ad, &bd, &mut cd.borrow_mut(), mu, nu, ku), "launch sgemm128 (rust)")
    };
    let mut c = |_: usize| {
        let f = f.as_ref().map_err(Clone::clone)?;
        let args =
            [Arg::buf(&ad), Arg::buf(&bd), Arg::Ptr(c_ptr), Arg::I32(m as i32), Arg::I32(n as i32), Arg::I32(k as i32)];
        launch_nvcc(f, stream, cfg, &args)
    };
    let mut blas_run = |_: usize| match &blas {
        Ok(h) => h.sgemm_row_major(m, n, k, ad.as_device_ptr(), bd.as_device_ptr(), c_ptr),
        Err(e) => Err(e.clone()),
    };
    let [rust, nvcc, cublas] = check_and_time_three(env, &reset, &check, [&mut r, &mut c, &mut blas_run], &|rel| {
        format!("relative error {rel:.1e}")
    })?;
    Ok(Row {
        name: "sgemm128",
        size: format!("{dim}^3 f32, 128x128 tiles"),
        work: Work::Flops(2.0 * (m * n * k) as f64),
        note: "one set: compute-bound; cuBLAS SGEMM timed in the same loop".into(),
        rust,
        nvcc,
        cublas: Some(cublas),
    })
}

/// bf16 tensor-core GEMM at 4096³: see [`gemm_bf16`].
pub fn gemm_mma_4k(env: &mut Env<'_>) -> Result<Row, String> {
    gemm_bf16(env, 4096 >> env.shift, "gemm_mma_4k", Kernel::Mma)
}

/// bf16 tensor-core GEMM at 8192³: see [`gemm_bf16`].
pub fn gemm_mma_8k(env: &mut Env<'_>) -> Result<Row, String> {
    gemm_bf16(env, 8192 >> env.shift, "gemm_mma_8k", Kernel::Mma)
}

/// TMA + wgmma GEMM at 4096³ (no CUDA C++ twin: compared with cuBLAS).
pub fn gemm_wgmma_4k(env: &mut Env<'_>) -> Result<Row, String> {
    gemm_bf16(env, 4096 >> env.shift, "gemm_wgmma_4k", Kernel::Wgmma)
}

/// TMA + wgmma GEMM at 8192³.
pub fn gemm_wgmma_8k(env: &mut Env<'_>) -> Result<Row, String> {
    gemm_bf16(env, 8192 >> env.shift, "gemm_wgmma_8k", Kernel::Wgmma)
}

/// examples/gemm on `cuda_device::tile` at 4096³ (persistent, 128 × 256 tiles, no clusters).
pub fn gemm_tile_4k(env: &mut Env<'_>) -> Result<Row, String> {
    gemm_bf16(env, 4096 >> env.shift, "gemm_tile_4k", Kernel::Tile(gemm::Variant::Plain))
}

/// examples/gemm at 8192³.
pub fn gemm_tile_8k(env: &mut Env<'_>) -> Result<Row, String> {
    gemm_bf16(env, 8192 >> env.shift, "gemm_tile_8k", Kernel::Tile(gemm::Variant::Plain))
}

/// examples/gemm in clusters of 2 blocks multicasting B, at 4096³.
pub fn gemm_tile_mc_4k(env: &mut Env<'_>) -> Result<Row, String> {
    gemm_bf16(env, 4096 >> env.shift, "gemm_tile_mc_4k", Kernel::Tile(gemm::Variant::Cluster))
}

/// examples/gemm in clusters of 2 blocks multicasting B, at 8192³.
pub fn gemm_tile_mc_8k(env: &mut Env<'_>) -> Result<Row, String> {
    gemm_bf16(env, 8192 >> env.shift, "gemm_tile_mc_8k", Kernel::Tile(gemm::Variant::Cluster))
}

/// Which Rust bf16 GEMM kernel a row times: the examples' own (the bench depends on their
/// library crates), so the numbers are those of the kernel the examples verify.
/// examples/gemm with ping-pong consumers (128 × 128 tiles, one per warpgroup), at 4096³.
pub fn gemm_tile_pp_4k(env: &mut Env<'_>) -> Result<Row, String> {
    gemm_bf16(env, 4096 >> env.shift, "gemm_tile_pp_4k", Kernel::Tile(gemm::Variant::Pingpong))
}

/// examples/gemm with ping-pong consumers, at 8192³.
pub fn gemm_tile_pp_8k(env: &mut Env<'_>) -> Result<Row, String> {
    gemm_bf16(env, 8192 >> env.shift, "gemm_tile_pp_8k", Kernel::Tile(gemm::Variant::Pingpong))
}

/// examples/gemm's fp8 GEMM (`gemm_fp8`) at 4096³: see [`gemm_fp8`].
pub fn gemm_fp8_4k(env: &mut Env<'_>) -> Result<Row, String> {
    gemm_fp8(env, 4096 >> env.shift, "gemm_fp8_4k", gemm::Variant::Plain)
}

/// `gemm_fp8` at 8192³.
pub fn gemm_fp8_8k(env: &mut Env<'_>) -> Result<Row, String> {
    gemm_fp8(env, 8192 >> env.shift, "gemm_fp8_8k", gemm::Variant::Plain)
}

/// `gemm_fp8_pingpong` at 4096³.
pub fn gemm_fp8_pp_4k(env: &mut Env<'_>) -> Result<Row, String> {
    gemm_fp8(env, 4096 >> env.shift, "gemm_fp8_pp_4k", gemm::Variant::Pingpong)
}

/// `gemm_fp8_pingpong` at 8192³.
pub fn gemm_fp8_pp_8k(env: &mut Env<'_>) -> Result<Row, String> {
    gemm_fp8(env, 8192 >> env.shift, "gemm_fp8_pp_8k", gemm::Variant::Pingpong)
}

/// `C = scale_a · scale_b · (A·B)`, E4M3 A (row-major) and B (column-major), f32 accumulation,
/// bf16 C: examples/gemm's fp8 kernel `variant` and cuBLASLt (`cublasLtMatmul`, E4M3 TN, bf16 D,
/// compute 32F, the scales as device pointers, fast accumulation: the tensor cores' accumulator
/// over all of K, as ours) on the same matrices. Checked on 1024 sampled entries against float64
/// sums of the fp8 inputs, within 2^-8 of the scaled sum of |products|.
fn gemm_fp8(env: &mut Env<'_>, dim: usize, name: &'static str, variant: gemm::Variant) -> Result<Row, String> {
    let (m, n, k) = (dim, dim, dim);
    let a: Vec<E4M3> = env.rng.vec_f32(m * k).into_iter().map(|x| E4M3::from_f32(2.0 * x)).collect();
    let b: Vec<E4M3> = env.rng.vec_f32(n * k).into_iter().map(|x| E4M3::from_f32(2.0 * x)).collect();
    let (sa, sb) = (0.75f32, 1.25f32);
    let mut pick = Lcg(env.rng.next_u64());
    let want: Vec<(usize, f64, f64)> = (0..1024)
        .map(|_| {
            let (i, j) = ((pick.next_u64() % m as u64) as usize, (pick.next_u64() % n as u64) as usize);
            let (mut s, mut scale) = (0f64, 0f64);
            for p in 0..k {
                let t = a[i * k + p].to_f32() as f64 * b[j * k + p].to_f32() as f64;
                s += t;
                scale += t.abs();
            }
            let ab = sa as f64 * sb as f64;
            (i * n + j, ab * s, ab * scale + 1e-6)
        })
        .collect();
    let (ad, bd) = (env.upload(&a, "a")?, env.upload(&b, "b")?);
    let (sad, sbd) = (env.upload(&[sa], "scale_a")?, env.upload(&[sb], "scale_b")?);
    let nan = Bf16x2::from_f32(NAN, NAN);
    let poison = env.upload(&vec![nan; m * n / 2], "poison")?;
    let cd = RefCell::new(env.upload(&vec![nan; m * n / 2], "c")?);
    let c_ptr = cd.borrow().as_device_ptr();
    let stream = env.stream;
    let g = ck(gemm::Gemm::new(env.ctx), "load examples/gemm's kernels")?;
    let ops = gemm::Fp8Operands::new(&ad, &bd, &sad, &sbd, (m, n, k)).map_err(|e| e.to_string())?;
    let plan = crate::cublaslt::Fp8Plan::new(
        stream,
        (m, n, k),
        true,
        ad.as_device_ptr(),
        bd.as_device_ptr(),
        c_ptr,
        sad.as_device_ptr(),
        sbd.as_device_ptr(),
    );
    let rel = 2f64.powi(-8) + 1e-6 * (k as f64).sqrt();
    let check = || {
        let got: Vec<f32> = env.download(&cd.borrow())?.iter().flat_map(|v| <[f32; 2]>::from(v.to_f32())).collect();
        sampled(&got, &want, rel)
    };
    let reset = || ck(cd.borrow_mut().copy_from(stream, &poison), "poison c");
    let kernel = variant.fp8_name().unwrap_or("?");
    let mut r = |_: usize| {
        g.run_fp8(stream, variant, &ops, &mut cd.borrow_mut()).map_err(|e| format!("launch {kernel} (rust): {e}"))
    };
    let mut c = |_: usize| Err("no CUDA C++ twin of the fp8 kernel (compared with cuBLASLt)".to_string());
    let mut blas_run = |_: usize| match &plan {
        Ok(p) => p.run(),
        Err(e) => Err(e.clone()),
    };
    let [rust, nvcc, cublas] = check_and_time_three(env, &reset, &check, [&mut r, &mut c, &mut blas_run], &|rel| {
        format!("error {rel:.1e} of the scaled sum of |products|")
    })?;
    Ok(Row {
        name,
        size: format!("{dim}^3 e4m3 -> f32 acc -> bf16, {kernel}"),
        work: Work::Flops(2.0 * (m * n * k) as f64),
        note: "A row-major, B column-major, per-tensor scales; cuBLASLt fp8 (TN, fast accumulation) timed in the same loop".into(),
        rust,
        nvcc,
        cublas: Some(cublas),
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Kernel {
    /// `gemm_mma`: mma.sync + ldmatrix + cp.async, with its nvcc twin.
    Mma,
    /// `gemm_wgmma`: TMA + wgmma, warp-specialised (sm_90a).
    Wgmma,
    /// examples/gemm (`cuda_device::tile`): persistent, `wait_group 1` overlap (sm_90a).
    Tile(gemm::Variant),
}

/// The loaded module of the example that [`Kernel`] names.
enum Gemm {
    Mma(gemm_mma::kernels::Module),
    Wgmma(gemm_wgmma_tma::kernels::Module),
    Tile(Box<gemm::Gemm>),
}

/// `C = A·B`, A row-major, B column-major, bf16 in and out, f32 accumulation: a Rust kernel
/// (`mma.sync`, with its CUDA C++ twin, or TMA + wgmma) and cuBLAS (`cublasGemmEx`, bf16, compute 32F) on the
/// same matrices. Checked on 1024 sampled entries against float64 sums of the bf16 inputs:
/// within 2^-8 of the sum of |products| (bf16 output rounding is at most 2^-9 of |c|; f32
/// accumulation adds about sqrt(k) 2^-24 of it).
fn gemm_bf16(env: &mut Env<'_>, dim: usize, name: &'static str, kernel: Kernel) -> Result<Row, String> {
    let (m, n, k) = (dim, dim, dim);
    let a: Vec<bf16> = env.rng.vec_f32(m * k).into_iter().map(bf16::from_f32).collect();
    let b: Vec<bf16> = env.rng.vec_f32(n * k).into_iter().map(bf16::from_f32).collect();
    let mut pick = Lcg(env.rng.next_u64());
    let want: Vec<(usize, f64, f64)> = (0..1024)
        .map(|_| {
            let (i, j) = ((pick.next_u64() % m as u64) as usize, (pick.next_u64() % n as u64) as usize);
            let (mut s, mut scale) = (0f64, 0f64);
            for p in 0..k {
                let t = a[i * k + p].to_f32() as f64 * b[j * k + p].to_f32() as f64;
                s += t;
                scale += t.abs();
            }
            (i * n + j, s, scale + 1e-6)
        })
        .collect();
    let (ad, bd) = (env.upload(&a, "a")?, env.upload(&b, "b")?);
    let nan = Bf16x2::from_f32(NAN, NAN);
    let poison = env.upload(&vec![nan; m * n / 2], "poison")?;
    let cd = RefCell::new(env.upload(&vec![nan; m * n / 2], "c")?);
    let c_ptr = cd.borrow().as_device_ptr();
    let cfg = LaunchConfig {
        grid_dim: ((n / MMA_BM) as u32, (m / MMA_BM) as u32, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let stream = env.stream;
    let gemm = match kernel {
        Kernel::Mma => Gemm::Mma(ck(gemm_mma::kernels::load(env.ctx), "load examples/gemm-mma's kernel")?),
        Kernel::Wgmma => {
            Gemm::Wgmma(ck(gemm_wgmma_tma::kernels::load(env.ctx), "load examples/gemm-wgmma-tma's kernel")?)
        }
        Kernel::Tile(_) => Gemm::Tile(Box::new(ck(gemm::Gemm::new(env.ctx), "load examples/gemm's kernels")?)),
    };
    let f = match kernel {
        Kernel::Mma => env.nvcc_fn("gemm_mma", "gemm_mma"),
        Kernel::Wgmma | Kernel::Tile(_) => {
            Err("no CUDA C++ twin of the TMA + wgmma kernel (compared with cuBLAS)".into())
        }
    };
    let wg_cfg = LaunchConfig {
        grid_dim: ((n / WG_BM) as u32, (m / WG_BM) as u32, 1),
        block_dim: (384, 1, 1),
        shared_mem_bytes: WG_SMEM_BYTES as u32,
    };
    let map = |buf: &cuda_core::DeviceBuffer<bf16>, rows: usize| {
        TensorMap::tiled_2d(
            buf.as_device_ptr(),
            TmaElement::Bf16,
            rows as u64,
            k as u64,
            WG_BM as u32,
            WG_BK as u32,
            TmaSwizzle::B128,
        )
        .map_err(|e| format!("encode a tensor map: {e}"))
    };
    let maps = env.upload(&[map(&ad, m)?, map(&bd, n)?], "tensor maps")?;
    let no_bias = env.upload::<f32>(&[], "empty bias")?;
    let tile_ops = gemm::Operands::new(&ad, &bd, &no_bias, m, n, k).map_err(|e| e.to_string())?;
    let blas = Cublas::new(stream);
    let rel = 2f64.powi(-8) + 1e-6 * (k as f64).sqrt();
    let check = || {
        let got: Vec<f32> = env.download(&cd.borrow())?.iter().flat_map(|v| <[f32; 2]>::from(v.to_f32())).collect();
        sampled(&got, &want, rel)
    };
    let reset = || ck(cd.borrow_mut().copy_from(stream, &poison), "poison c");
    let mut r = |_: usize| {
        let (mu, nu, ku) = (m as u32, n as u32, k as u32);
        match &gemm {
            Gemm::Mma(module) => {
                ck(module.gemm_mma(stream, cfg, &ad, &bd, &mut cd.borrow_mut(), mu, nu, ku), "launch gemm_mma (rust)")
            }
            Gemm::Wgmma(module) => ck(
                module.gemm_wgmma(stream, wg_cfg, &maps, &mut cd.borrow_mut(), mu, nu, ku),
                "launch gemm_wgmma (rust)",
            ),
            Gemm::Tile(g) => {
                let Kernel::Tile(variant) = kernel else { unreachable!("a Tile module for a Tile row") };
                g.run(stream, variant, &tile_ops, &mut cd.borrow_mut(), 1.0)
                    .map_err(|e| format!("launch {} (rust): {e}", variant.name()))
            }
        }
    };
    let mut c = |_: usize| {
        let f = f.as_ref().map_err(Clone::clone)?;
        let args =
            [Arg::buf(&ad), Arg::buf(&bd), Arg::Ptr(c_ptr), Arg::I32(m as i32), Arg::I32(n as i32), Arg::I32(k as i32)];
        launch_nvcc(f, stream, cfg, &args)
    };
    let mut blas_run = |_: usize| match &blas {
        Ok(h) => h.gemm_bf16(
            (m, n, k),
            (ad.as_device_ptr(), Layout::RowMajor),
            (bd.as_device_ptr(), Layout::ColMajor),
            c_ptr,
        ),
        Err(e) => Err(e.clone()),
    };
    let [rust, nvcc, cublas] = check_and_time_three(env, &reset, &check, [&mut r, &mut c, &mut blas_run], &|rel| {
        format!("error {rel:.1e} of the sum of |products|")
    })?;
    Ok(Row {
        name,
        size: format!(
            "{dim}^3 bf16 -> f32 acc, {}",
            match kernel {
                Kernel::Mma => "mma.sync",
                Kernel::Wgmma => "TMA+wgmma",
                Kernel::Tile(gemm::Variant::Cluster) => "tile, 2-CTA multicast",
                Kernel::Tile(gemm::Variant::Pingpong) => "tile, ping-pong",
                Kernel::Tile(_) => "tile, persistent",
            }
        ),
        work: Work::Flops(2.0 * (m * n * k) as f64),
        note: "A row-major, B column-major; cuBLAS GemmEx bf16 (TN) timed in the same loop".into(),
        rust,
        nvcc,
        cublas: Some(cublas),
    })
}

/// The three sides of a GEMM row (Rust, nvcc, cuBLAS) on one output: each run once on a
/// poisoned output (`reset`) and checked (`check`, whose error `how_close` words), then the
/// sides that passed timed in one interleaved loop. A side whose error says it is absent (no
/// cubin, no cuBLAS, no CUDA C++ twin) is `Missing`, a wrong one `Wrong`.
fn check_and_time_three(
    env: &Env<'_>,
    reset: &dyn Fn() -> Result<(), String>,
    check: &dyn Fn() -> Result<f64, String>,
    sides: [&mut dyn FnMut(usize) -> Result<(), String>; 3],
    how_close: &dyn Fn(f64) -> String,
) -> Result<[Outcome; 3], String> {
    let stream = env.stream;
    let [r, c, b] = sides;
    let checked = |run: &mut dyn FnMut(usize) -> Result<(), String>| -> Result<f64, String> {
        reset()?;
        run(0)?;
        check()
    };
    let oks = [checked(&mut *r), checked(&mut *c), checked(&mut *b)];
    for (side, ok) in ["rust", "nvcc", "cublas"].into_iter().zip(&oks) {
        match ok {
            Ok(rel) => println!("    check {side}: OK ({})", how_close(*rel)),
            Err(e) if e.contains("twin") => println!("    {side}: {e}"),
            Err(e) => println!("    check {side}: FAILED, not timed: {e}"),
        }
    }
    let mut tr = |i: usize, s: &Stamp| s.around(stream, || r(i));
    let mut tc = |i: usize, s: &Stamp| s.around(stream, || c(i));
    let mut tb = |i: usize, s: &Stamp| s.around(stream, || b(i));
    let t = time_sides(
        env.ctx,
        env.stream,
        env.warmup,
        env.reps,
        &mut [
            oks[0].is_ok().then_some(&mut tr as &mut crate::measure::Launch<'_>),
            oks[1].is_ok().then_some(&mut tc as &mut crate::measure::Launch<'_>),
            oks[2].is_ok().then_some(&mut tb as &mut crate::measure::Launch<'_>),
        ],
    )?;
    let outcome = |ok: Result<f64, String>, t: Option<crate::measure::Timing>| match (ok, t) {
        (Ok(_), Some(t)) => Outcome::Timed(t),
        (Err(e), _)
            if e.starts_with("no cubin") || e.contains(".cubin") || e.contains("libcublas") || e.contains("twin") =>
        {
            Outcome::Missing(e)
        }
        (Err(e), _) => Outcome::Wrong(e),
        (Ok(_), None) => Outcome::Missing("not timed".into()),
    };
    let [ro, co, bo] = oks;
    Ok([outcome(ro, t[0]), outcome(co, t[1]), outcome(bo, t[2])])
}

pub fn attention(env: &mut Env<'_>) -> Result<Row, String> {
    attention_row(env, false)
}

pub fn attention_causal(env: &mut Env<'_>) -> Result<Row, String> {
    attention_row(env, true)
}

/// Attention forward over 16 (batch, head) pairs of `seq` rows, head dimension 64: the output
/// and the log-sum-exp of 256 sampled rows checked against float64.
fn attention_row(env: &mut Env<'_>, causal: bool) -> Result<Row, String> {
    let (bh, seq) = (16usize, 2048usize >> env.shift.min(3));
    let n = bh * seq * ATT_D;
    let scale = 1.0 / (ATT_D as f32).sqrt();
    let (q, k, v) = (env.rng.vec_f32(n), env.rng.vec_f32(n), env.rng.vec_f32(n));
    let mut pick = Lcg(env.rng.next_u64());
    // (index into out or lse, float64 value, scale): each sampled row's 64 outputs and its lse.
    let mut want: Vec<(usize, f64, f64)> = Vec::new();
    let mut want_lse: Vec<(usize, f64, f64)> = Vec::new();
    for _ in 0..256 {
        let (h, i) = ((pick.next_u64() % bh as u64) as usize, (pick.next_u64() % seq as u64) as usize);
        let at = |x: &[f32], row: usize, d: usize| x[(h * seq + row) * ATT_D + d] as f64;
        let keys = if causal { i + 1 } else { seq };
        let s: Vec<f64> =
            (0..keys).map(|j| (0..ATT_D).map(|d| at(&q, i, d) * at(&k, j, d)).sum::<f64>() * scale as f64).collect();
        let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let l: f64 = s.iter().map(|x| (x - m).exp()).sum();
        for d in 0..ATT_D {
            let o: f64 = s.iter().enumerate().map(|(j, x)| (x - m).exp() * at(&v, j, d)).sum::<f64>() / l;
            want.push(((h * seq + i) * ATT_D + d, o, 1.0));
        }
        want_lse.push((h * seq + i, m + l.ln(), 1.0 + (m + l.ln()).abs()));
    }
    let (qd, kd, vd) = (env.upload(&q, "q")?, env.upload(&k, "k")?, env.upload(&v, "v")?);
    let poison = env.upload(&vec![NAN; n], "poison")?;
    let outd = RefCell::new(env.upload(&vec![NAN; n], "out")?);
    let lsed = RefCell::new(env.upload(&vec![NAN; bh * seq], "lse")?);
    let (out_ptr, lse_ptr) = (outd.borrow().as_device_ptr(), lsed.borrow().as_device_ptr());
    let t = ATT_TILE as u32;
    let cfg = LaunchConfig { grid_dim: (seq as u32 / t, bh as u32, 1), block_dim: (16, 16, 1), shared_mem_bytes: 0 };
    let (stream, rust) = (env.stream, env.rust);
    let f = env.nvcc_fn("attention", "attention");
    let flag = u32::from(causal);
    let mut reset = || ck(outd.borrow_mut().copy_from(stream, &poison), "poison out");
    let check = || {
        let got = env.download(&outd.borrow())?;
        let lse = env.download(&lsed.borrow())?;
        // float32 sums of `seq` terms and expf: about 1e-5 of the values' scale.
        Ok(sampled(&got, &want, 1e-4)?.max(sampled(&lse, &want_lse, 1e-5)?))
    };
    let mut r = |_: usize| {
        let (mut o, mut l) = (outd.borrow_mut(), lsed.borrow_mut());
        ck(
            rust.attention(stream, cfg, &qd, &kd, &vd, &mut o, &mut l, seq as u32, scale, flag),
            "launch attention (rust)",
        )
    };
    let mut c = |_: usize| {
        let f = f.as_ref().map_err(Clone::clone)?;
        let args = [
            Arg::buf(&qd),
            Arg::buf(&kd),
            Arg::buf(&vd),
            Arg::Ptr(out_ptr),
            Arg::Ptr(lse_ptr),
            Arg::I32(seq as i32),
            Arg::F32(scale),
            Arg::I32(flag as i32),
        ];
        launch_nvcc(f, stream, cfg, &args)
    };
    let (rust, nvcc) = env.run_sides(1, &mut reset, &check, &mut r, &mut c)?;
    // Q K^T and P V: 4 bh seq^2 d FLOP, half of it under the causal mask.
    let flops = 4.0 * (bh * seq * seq * ATT_D) as f64 * if causal { 0.5 } else { 1.0 };
    Ok(Row {
        name: if causal { "attention_causal" } else { "attention" },
        size: format!("{bh} x {seq} x {ATT_D} f32"),
        work: Work::Flops(flops),
        note: "one set: q, k, v of 8 MB each, compute-bound".into(),
        rust,
        nvcc,
        cublas: None,
    })
}
