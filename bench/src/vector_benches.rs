//! Benchmarks of vector and packed element types: vecadd and block sums on `F32x4` (`float4`),
//! bf16 axpy on `Bf16x2` pairs, and the three-pass inclusive scan on `U32x4` (`uint4`).

use std::cell::RefCell;

use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::half::{Bf16x2, bf16};
use cuda_device::vector::{F32x4, U32x4};

use crate::benches::{Env, NAN, Row, Work, rotation_note};
use crate::check::{compare_exact, compare_f32};
use crate::kernels::SCAN_TILE;
use crate::measure::{Arg, ck, launch_nvcc};

fn pack4(v: &[f32]) -> Vec<F32x4> {
    v.chunks_exact(4).map(|c| F32x4::new([c[0], c[1], c[2], c[3]])).collect()
}

fn unpack4(v: &[F32x4]) -> Vec<f32> {
    v.iter().flat_map(|x| x.to_array()).collect()
}

pub fn vecadd_v4(env: &mut Env<'_>) -> Result<Row, String> {
    let n = 1usize << (26 - env.shift);
    let n4 = n / 4;
    let (a, b) = (env.rng.vec_f32(n), env.rng.vec_f32(n));
    let want: Vec<f64> = a.iter().zip(&b).map(|(&x, &y)| x as f64 + y as f64).collect();
    let tol = |i: usize| 1e-6 * (a[i].abs() + b[i].abs()) as f64;
    let sets = env.sets_for(12 * n);
    let (a0, b0) = (env.upload(&pack4(&a), "a")?, env.upload(&pack4(&b), "b")?);
    let (ad, bd) = (env.replicate(&a0, sets)?, env.replicate(&b0, sets)?);
    let poison = env.upload(&vec![F32x4::splat(NAN); n4], "poison")?;
    let cd = RefCell::new(env.replicate(&poison, sets)?);
    let cfg = LaunchConfig::for_num_elems(n4 as u32);
    let (stream, rust) = (env.stream, env.rust);
    let f = env.nvcc_fn("vector", "vecadd_v4");
    let c_ptrs: Vec<u64> = cd.borrow().iter().map(|c| c.as_device_ptr()).collect();
    let mut reset = || ck(cd.borrow_mut()[0].copy_from(stream, &poison), "poison c");
    let check = || compare_f32(&unpack4(&env.download(&cd.borrow()[0])?), &want, tol, 1e-6);
    let mut r =
        |k: usize| ck(rust.vecadd_v4(stream, cfg, &ad[k], &bd[k], &mut cd.borrow_mut()[k]), "launch vecadd_v4 (rust)");
    let mut c = |k: usize| {
        let f = f.as_ref().map_err(Clone::clone)?;
        launch_nvcc(f, stream, cfg, &[Arg::buf(&ad[k]), Arg::buf(&bd[k]), Arg::Ptr(c_ptrs[k]), Arg::I32(n4 as i32)])
    };
    let (rust, nvcc) = env.run_sides(sets, &mut reset, &check, &mut r, &mut c)?;
    Ok(Row {
        name: "vecadd_v4",
        size: format!("2^{} f32 as F32x4", 26 - env.shift),
        work: Work::Bytes(12.0 * n as f64),
        note: rotation_note(sets, 12 * n),
        rust,
        nvcc,
        cublas: None,
    })
}

pub fn reduce_v4(env: &mut Env<'_>) -> Result<Row, String> {
    let n = 1usize << (26 - env.shift);
    let n4 = n / 4;
    let grid = env.ctx.sm_count() as usize * 8;
    let x = env.rng.vec_f32(n);
    // The kernel's order: element i of the grid-stride loop is F32x4 number i.
    let mut want = vec![0f64; grid];
    let mut absum = vec![0f64; grid];
    for (i, c) in x.chunks_exact(4).enumerate() {
        let block = (i % (grid * 256)) / 256;
        want[block] += c.iter().map(|&v| v as f64).sum::<f64>();
        absum[block] += c.iter().map(|&v| v.abs() as f64).sum::<f64>();
    }
    let tol = |i: usize| 1e-5 * absum[i] + 1e-6;
    let sets = env.sets_for(4 * n);
    let x0 = env.upload(&pack4(&x), "x")?;
    let xd = env.replicate(&x0, sets)?;
    let poison = env.upload(&vec![NAN; grid], "poison")?;
    let pd = RefCell::new(env.upload(&vec![NAN; grid], "partials")?);
    let p_ptr = pd.borrow().as_device_ptr();
    let cfg = LaunchConfig { grid_dim: (grid as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (stream, rust) = (env.stream, env.rust);
    let f = env.nvcc_fn("vector", "block_sum_v4");
    let mut reset = || ck(pd.borrow_mut().copy_from(stream, &poison), "poison partials");
    let check = || compare_f32(&env.download(&pd.borrow())?, &want, tol, 1e-5);
    let mut r =
        |k: usize| ck(rust.block_sum_v4(stream, cfg, &xd[k], &mut pd.borrow_mut()), "launch block_sum_v4 (rust)");
    let mut c = |k: usize| {
        let f = f.as_ref().map_err(Clone::clone)?;
        launch_nvcc(f, stream, cfg, &[Arg::buf(&xd[k]), Arg::Ptr(p_ptr), Arg::I32(n4 as i32)])
    };
    let (rust, nvcc) = env.run_sides(sets, &mut reset, &check, &mut r, &mut c)?;
    Ok(Row {
        name: "reduce_v4",
        size: format!("2^{} f32 as F32x4, {grid} blk", 26 - env.shift),
        work: Work::Bytes(4.0 * n as f64),
        note: rotation_note(sets, 4 * n),
        rust,
        nvcc,
        cublas: None,
    })
}

pub fn axpy_bf16(env: &mut Env<'_>) -> Result<Row, String> {
    let n = 1usize << (26 - env.shift);
    let n2 = n / 2;
    let rnd = |env: &mut Env<'_>| -> Vec<Bf16x2> {
        (0..n2).map(|_| Bf16x2::new(bf16::from_f32(env.rng.next_f32()), bf16::from_f32(env.rng.next_f32()))).collect()
    };
    let (x, y) = (rnd(env), rnd(env));
    let a = Bf16x2::splat(bf16::from_f32(1.25));
    // One rounding to bf16 of the exact a*x+y, as fma.rn.bf16x2 does; the f32 route below can
    // differ by one bf16 ulp (double rounding), which the tolerance allows.
    let want: Vec<f64> = x
        .iter()
        .zip(&y)
        .flat_map(|(xv, yv)| {
            let (x0, x1) = xv.to_f32();
            let (y0, y1) = yv.to_f32();
            [1.25 * x0 as f64 + y0 as f64, 1.25 * x1 as f64 + y1 as f64]
        })
        .collect();
    let tol = |i: usize| want[i].abs() / 128.0 + 1e-30;
    let sets = env.sets_for(6 * n);
    let x0 = env.upload(&x, "x")?;
    let xd = env.replicate(&x0, sets)?;
    let y0 = env.upload(&y, "y")?;
    let yd = RefCell::new(env.replicate(&y0, sets)?);
    let y_ptrs: Vec<u64> = yd.borrow().iter().map(|b| b.as_device_ptr()).collect();
    let cfg = LaunchConfig::for_num_elems(n2 as u32);
    let (stream, rust) = (env.stream, env.rust);
    let f = env.nvcc_fn("vector", "axpy_bf16");
    // In place: y is restored before each check; timing keeps updating it (values stay small).
    let mut reset = || ck(yd.borrow_mut()[0].copy_from(stream, &y0), "restore y");
    let check = || {
        let got: Vec<f32> = env.download(&yd.borrow()[0])?.iter().flat_map(|p| <[f32; 2]>::from(p.to_f32())).collect();
        compare_f32(&got, &want, tol, 1e-2)
    };
    let mut r =
        |k: usize| ck(rust.axpy_bf16(stream, cfg, a, &xd[k], &mut yd.borrow_mut()[k]), "launch axpy_bf16 (rust)");
    let mut c = |k: usize| {
        let f = f.as_ref().map_err(Clone::clone)?;
        launch_nvcc(
            f,
            stream,
            cfg,
            &[Arg::U32(a.to_bits()), Arg::buf(&xd[k]), Arg::Ptr(y_ptrs[k]), Arg::I32(n2 as i32)],
        )
    };
    let (rust, nvcc) = env.run_sides(sets, &mut reset, &check, &mut r, &mut c)?;
    Ok(Row {
        name: "axpy_bf16",
        size: format!("2^{} bf16 as Bf16x2", 26 - env.shift),
        work: Work::Bytes(6.0 * n as f64),
        note: rotation_note(sets, 6 * n),
        rust,
        nvcc,
        cublas: None,
    })
}

pub fn scan(env: &mut Env<'_>) -> Result<Row, String> {
    let n = 1usize << (26 - env.shift);
    let tiles = n / SCAN_TILE;
    let per = tiles.div_ceil(256).max(1);
    let x: Vec<u32> = (0..n).map(|_| (env.rng.next_u64() >> 40) as u32).collect();
    let mut want = Vec::with_capacity(n);
    let mut run = 0u32;
    for &v in &x {
        run = run.wrapping_add(v);
        want.push(run);
    }
    let x4: Vec<U32x4> = x.chunks_exact(4).map(|c| U32x4::new([c[0], c[1], c[2], c[3]])).collect();
    let sets = env.sets_for(8 * n);
    let x0 = env.upload(&x4, "x")?;
    let xd = env.replicate(&x0, sets)?;
    let poison = env.upload(&vec![U32x4::splat(0xdead_beef); n / 4], "poison")?;
    let yd = RefCell::new(env.replicate(&poison, sets)?);
    let y_ptrs: Vec<u64> = yd.borrow().iter().map(|b| b.as_device_ptr()).collect();
    let sums = RefCell::new(ck(DeviceBuffer::<u32>::zeroed(env.stream, tiles), "allocate block sums")?);
    let s_ptr = sums.borrow().as_device_ptr();
    let tile_cfg = LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (stream, rust) = (env.stream, env.rust);
    let fs: Result<Vec<_>, String> =
        ["scan_reduce", "scan_offsets", "scan_tile"].iter().map(|e| env.nvcc_fn("scan", e)).collect();
    let mut reset = || ck(yd.borrow_mut()[0].copy_from(stream, &poison), "poison y");
    let check = || {
        let got: Vec<u32> = env.download(&yd.borrow()[0])?.iter().flat_map(|v| v.to_array()).collect();
        compare_exact(&got, &want)
    };
    let mut r = |k: usize| {
        ck(rust.scan_reduce(stream, tile_cfg, &xd[k], &mut sums.borrow_mut()), "launch scan_reduce (rust)")?;
        ck(rust.scan_offsets(stream, one, &mut sums.borrow_mut(), per as u32), "launch scan_offsets (rust)")?;
        ck(rust.scan_tile(stream, tile_cfg, &xd[k], &sums.borrow(), &mut yd.borrow_mut()[k]), "launch scan_tile (rust)")
    };
    let mut c = |k: usize| {
        let fs = fs.as_ref().map_err(Clone::clone)?;
        launch_nvcc(&fs[0], stream, tile_cfg, &[Arg::buf(&xd[k]), Arg::Ptr(s_ptr)])?;
        launch_nvcc(&fs[1], stream, one, &[Arg::Ptr(s_ptr), Arg::I32(tiles as i32), Arg::I32(per as i32)])?;
        launch_nvcc(
            &fs[2],
            stream,
            tile_cfg,
            &[Arg::buf(&xd[k]), Arg::Ptr(s_ptr), Arg::Ptr(y_ptrs[k]), Arg::I32(n as i32 / 4)],
        )
    };
    let (rust, nvcc) = env.run_sides(sets, &mut reset, &check, &mut r, &mut c)?;
    Ok(Row {
        name: "scan",
        size: format!("2^{} u32, 3 passes", 26 - env.shift),
        work: Work::Bytes(8.0 * n as f64),
        note: rotation_note(sets, 8 * n),
        rust,
        nvcc,
        cublas: None,
    })
}
