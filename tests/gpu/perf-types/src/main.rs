//! GPU test of the performance types and hints (issue 11), each against a CPU reference on random
//! inputs with the output poisoned first: `F32x4`/`F64x2`/`U32x4` elements and `as_vectors`
//! views; `f16` parameters and buffers, `bf16`, `F16x2`/`Bf16x2` arithmetic and conversions;
//! `F16x8`/`Bf16x8` elements and a `&[f16]` viewed as `F16x8` (and its scalar fallback);
//! `#[fast_math]` against IEEE; `cp.async` tiles (with zero fill) into a `SharedMemory` static;
//! `ConstantMemory` read in place, rewritten from the host (`write_global` on the sideloaded
//! module and on the generated one) and read back; `#[unroll]` loops.
#![feature(f16)]

use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::half::{Bf16x2, Bf16x8, F16x2, F16x8, bf16};
use cuda_device::vector::{F32x4, F64x2, U32x4, as_vectors, as_vectors_mut, is_viewable};
use cuda_device::{
    ConstantMemory, DisjointSlice, SharedMemory, async_copy, cuda_module, fast_math, kernel, launch_bounds,
    sync_threads, thread, unroll,
};
use cuda_host::{cuda_launch, load_kernel_module};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare};

/// Scales applied by `const_scale`; the host rewrites them in one check.
static SCALES: ConstantMemory<[f32; 4]> = ConstantMemory::new([1.0, 2.0, 3.0, 4.0]);

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn vec4_add(a: &[F32x4], b: &[F32x4], mut c: DisjointSlice<F32x4>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = c.get_mut(idx) {
            *o = a[i] + b[i];
        }
    }

    #[kernel]
    pub fn f64x2_scale(k: f64, a: &[F64x2], mut c: DisjointSlice<F64x2>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = c.get_mut(idx) {
            *o = a[i] * F64x2::splat(k);
        }
    }

    #[kernel]
    pub fn u32x4_mix(a: &[U32x4], mut c: DisjointSlice<U32x4>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = c.get_mut(idx) {
            let v = a[i];
            *o = U32x4::new([v.w(), v.z() ^ v.x(), v.y().wrapping_mul(3), v.x()]);
        }
    }

    /// Doubles `x` through a vector view when it allows one (it does: device buffers are aligned).
    #[kernel]
    pub fn view_double(x: &[f32], out: &mut [f32]) {
        let i = thread::index_1d().get();
        match as_vectors::<F32x4>(x) {
            Some(v) if i < v.len() => {
                let d = v[i] + v[i];
                for l in 0..4 {
                    out[4 * i + l] = d[l];
                }
            }
            Some(_) => {}
            None => {
                if i == 0 {
                    out[0] = -1.0;
                }
            }
        }
    }

    #[kernel]
    pub fn halves(
        s: f16,
        x: &[f16],
        y: &[bf16],
        mut o1: DisjointSlice<f16>,
        mut o2: DisjointSlice<bf16>,
        mut o3: DisjointSlice<f32>,
    ) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = o1.get_mut(idx) {
            *o = x[i] * s + x[i];
        }
        if let Some(o) = o2.get_mut(idx) {
            *o = y[i] * y[i] - y[i];
        }
        if let Some(o) = o3.get_mut(idx) {
            *o = x[i] as f32 + y[i].to_f32();
        }
    }

    #[kernel]
    pub fn packed(
        p: &[F16x2],
        q: &[Bf16x2],
        f: &[f32],
        mut o1: DisjointSlice<F16x2>,
        mut o2: DisjointSlice<Bf16x2>,
        mut o3: DisjointSlice<u32>,
        mut o4: DisjointSlice<u32>,
    ) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = o1.get_mut(idx) {
            *o = p[i].mul_add(p[i], p[i]).max(-p[i]);
        }
        if let Some(o) = o2.get_mut(idx) {
            *o = q[i] * q[i] + q[i].min(Bf16x2::splat(bf16::ZERO));
        }
        if let Some(o) = o3.get_mut(idx) {
            *o = F16x2::from_f32(f[2 * i], f[2 * i + 1]).to_bits();
        }
        if let Some(o) = o4.get_mut(idx) {
            *o = Bf16x2::from_f32(f[2 * i], f[2 * i + 1]).to_bits();
        }
    }

    /// Eight halves per thread. `x` is viewed as `F16x8` when it allows (aligned, whole
    /// vectors), else doubled element by element: the host launches both shapes.
    #[kernel]
    pub fn half_vectors(
        a: &[F16x8],
        b: &[F16x8],
        c: &[Bf16x8],
        d: &[Bf16x8],
        x: &[f16],
        mut o1: DisjointSlice<F16x8>,
        mut o2: DisjointSlice<Bf16x8>,
        o3: &mut [f16],
    ) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = o1.get_mut(idx) {
            *o = a[i].mul_add(b[i], a[i]).max(-b[i]);
        }
        if let Some(o) = o2.get_mut(idx) {
            *o = c[i].mul_add(d[i], c[i]) - d[i];
        }
        if let (Some(x8), true) = (as_vectors::<F16x8>(x), is_viewable::<F16x8>(o3)) {
            if let Some(o8) = as_vectors_mut::<F16x8>(o3)
                && i < x8.len()
                && i < o8.len()
            {
                o8[i] = x8[i] + x8[i];
            }
        } else if i < x.len() && i < o3.len() {
            o3[i] = x[i] + x[i];
        }
    }

    #[kernel]
    #[fast_math]
    pub fn fast_fns(x: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let v = x[idx.get()];
        if let Some(o) = out.get_mut(idx) {
            *o = v.exp() / (v + 1.0).sqrt() + 1.0 / (v + 2.0).sqrt() + v.ln_1p().sin();
        }
    }

    #[kernel]
    pub fn ieee_fns(x: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let v = x[idx.get()];
        if let Some(o) = out.get_mut(idx) {
            *o = v.exp() / (v + 1.0).sqrt() + 1.0 / (v + 2.0).sqrt() + v.ln_1p().sin();
        }
    }

    /// Each block copies its 1024 floats into shared memory with 16-byte `cp.async` (the last
    /// thread's copy zero-fills its upper 8 bytes), then writes them back reversed.
    #[kernel]
    #[launch_bounds(256)]
    pub fn async_tile(src: &[F32x4], out: &mut [f32]) {
        static TILE: SharedMemory<F32x4, 256> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let g = thread::index_1d().get();
        if g < src.len() {
            let dst = TILE.as_mut_ptr().wrapping_add(t).cast::<u32>();
            let from = src.as_ptr().wrapping_add(g);
            // SAFETY: `dst` is this thread's slot of the block's tile, `from` an element of `src`.
            unsafe {
                if t == 255 {
                    async_copy::cp_async_ca_zfill_16(dst, from.cast(), 8);
                } else {
                    async_copy::cp_async_cg_16(dst, from.cast());
                }
            }
        }
        async_copy::cp_async_commit_group();
        async_copy::wait_group::<0>();
        sync_threads();
        let base = thread::blockIdx_x() as usize * 1024;
        for l in 0..4 {
            let e = 4 * t + l;
            // SAFETY: read after the barrier; every slot was written (or zero-filled).
            let v = unsafe { TILE.read(255 - t) }[3 - l];
            if base + e < out.len() {
                out[base + e] = v;
            }
        }
    }

    #[kernel]
    pub fn const_scale(x: &[f32], out: &mut [f32]) {
        let i = thread::index_1d().get();
        if i < out.len() {
            out[i] = x[i] * SCALES.get_ref()[i % 4] + SCALES.get()[0];
        }
    }

    #[kernel]
    pub fn unrolled(x: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let mut acc = 0.0f32;
        #[unroll]
        for k in 0..8 {
            acc += x[(8 * i + k) % x.len()] * (k + 1) as f32;
        }
        #[unroll(4)]
        for k in 0..10 {
            acc += k as f32;
        }
        unroll!(
            2,
            for k in 0..3 {
                acc -= k as f32;
            }
        );
        if let Some(o) = out.get_mut(idx) {
            *o = acc;
        }
    }
}

const N: usize = 1 << 16;

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig::for_num_elems(n as u32)
}

fn f16_ulps(a: f16, b: f16) -> u32 {
    (a.to_bits() as i32 - b.to_bits() as i32).unsigned_abs()
}

/// `x` rounded once to bf16 (nearest, ties to even). Through f32 rounded to odd, which keeps
/// enough bits that rounding that to bf16 gives the same result as rounding `x` directly.
fn bf16_of_f64(x: f64) -> bf16 {
    let f = x as f32;
    let odd = if f as f64 != x && f.to_bits() & 1 == 0 {
        if (f as f64) < x { f.next_up() } else { f.next_down() }
    } else {
        f
    };
    bf16::from_f32(odd)
}

/// `a * b + c` of bf16 values as the GPU computes it in one of two legal ways: fused (`fma.rn.bf16`,
/// one rounding of the exact value, which f64 holds for these magnitudes) or rounded after the
/// product and again after the sum. The default build contracts `a * b + c` into the fused form,
/// as nvcc's `--fmad=true` does.
fn bf16_fma_or_not(a: bf16, b: bf16, c: bf16) -> [bf16; 2] {
    let exact = a.to_f32() as f64 * b.to_f32() as f64 + c.to_f32() as f64;
    [bf16_of_f64(exact), a * b + c]
}

fn main() {
    let mut report = Report::new("perf-types");
    let mut rng = Lcg::from_env_or_clock();
    let (ctx, s, m) = report.load(kernels::load);

    report.check("f32x4_elements", || {
        let (a, b): (Vec<F32x4>, Vec<F32x4>) = (0..N / 4)
            .map(|_| {
                (F32x4::new([0.0; 4].map(|_: f32| rng.next_f32())), F32x4::new([0.0; 4].map(|_: f32| rng.next_f32())))
            })
            .unzip();
        let (ad, bd) = (ck(DeviceBuffer::from_host(&s, &a), "copy a")?, ck(DeviceBuffer::from_host(&s, &b), "copy b")?);
        let mut cd = ck(DeviceBuffer::from_host(&s, &vec![F32x4::splat(f32::NAN); N / 4]), "poison c")?;
        ck(m.vec4_add(&s, cfg(N / 4), &ad, &bd, &mut cd), "launch vec4_add")?;
        let want: Vec<F32x4> = a.iter().zip(&b).map(|(x, y)| *x + *y).collect();
        compare("vec4_add", &ck(cd.to_host_vec(&s), "copy c back")?, &want, |x, y| {
            x.to_array().map(f32::to_bits) == y.to_array().map(f32::to_bits)
        })
    });

    report.check("f64x2_and_u32x4_elements", || {
        let a: Vec<F64x2> = (0..N / 2).map(|_| F64x2::new([rng.next_f64(), rng.next_f64()])).collect();
        let k = rng.next_f64();
        let ad = ck(DeviceBuffer::from_host(&s, &a), "copy a")?;
        let mut cd = ck(DeviceBuffer::from_host(&s, &vec![F64x2::splat(f64::NAN); N / 2]), "poison c")?;
        ck(m.f64x2_scale(&s, cfg(N / 2), k, &ad, &mut cd), "launch f64x2_scale")?;
        let want: Vec<F64x2> = a.iter().map(|v| *v * F64x2::splat(k)).collect();
        compare("f64x2_scale", &ck(cd.to_host_vec(&s), "copy c back")?, &want, |x, y| x == y)?;
        let u: Vec<U32x4> = (0..N / 4).map(|_| U32x4::new([0; 4].map(|_: u32| rng.next_u32()))).collect();
        let ud = ck(DeviceBuffer::from_host(&s, &u), "copy u")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![U32x4::splat(0xdead_beef); N / 4]), "poison o")?;
        ck(m.u32x4_mix(&s, cfg(N / 4), &ud, &mut od), "launch u32x4_mix")?;
        let want: Vec<U32x4> =
            u.iter().map(|v| U32x4::new([v.w(), v.z() ^ v.x(), v.y().wrapping_mul(3), v.x()])).collect();
        compare("u32x4_mix", &ck(od.to_host_vec(&s), "copy o back")?, &want, |x, y| x == y)
    });

    report.check("vector_view_of_f32_slice", || {
        let x = rng.vec_f32(N);
        let xd = ck(DeviceBuffer::from_host(&s, &x), "copy x")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; N]), "poison out")?;
        ck(m.view_double(&s, cfg(N / 4), &xd, &mut od), "launch view_double")?;
        let want: Vec<f32> = x.iter().map(|v| v + v).collect();
        compare("view_double", &ck(od.to_host_vec(&s), "copy out back")?, &want, |a, b| a.to_bits() == b.to_bits())
    });

    report.check("f16_and_bf16_scalars", || {
        let sc = (rng.next_f32() / 1000.0) as f16;
        let x: Vec<f16> = (0..N).map(|_| (rng.next_f32() / 100.0) as f16).collect();
        let y: Vec<bf16> = (0..N).map(|_| bf16::from_f32(rng.next_f32() / 100.0)).collect();
        let (xd, yd) = (ck(DeviceBuffer::from_host(&s, &x), "copy x")?, ck(DeviceBuffer::from_host(&s, &y), "copy y")?);
        let mut o1 = ck(DeviceBuffer::from_host(&s, &vec![f16::NAN; N]), "poison o1")?;
        let mut o2 = ck(DeviceBuffer::from_host(&s, &vec![bf16::NAN; N]), "poison o2")?;
        let mut o3 = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; N]), "poison o3")?;
        ck(m.halves(&s, cfg(N), sc, &xd, &yd, &mut o1, &mut o2, &mut o3), "launch halves")?;
        // x * s + x contracts to one fma.rn.f16; the f32 route rounds twice: at most 1 ulp apart.
        let w1: Vec<f16> = x.iter().map(|&v| (v as f32).mul_add(sc as f32, v as f32) as f16).collect();
        compare("f16 fma", &ck(o1.to_host_vec(&s), "copy o1")?, &w1, |a, b| f16_ulps(*a, *b) <= 1)?;
        let w2: Vec<[bf16; 2]> = y.iter().map(|&v| bf16_fma_or_not(v, v, -v)).collect();
        let fused_or_not = |got: &bf16, want: &[bf16; 2]| want.iter().any(|w| w.to_bits() == got.to_bits());
        compare("bf16 mul/sub", &ck(o2.to_host_vec(&s), "copy o2")?, &w2, fused_or_not)?;
        let w3: Vec<f32> = x.iter().zip(&y).map(|(&a, &b)| a as f32 + b.to_f32()).collect();
        compare("conversions", &ck(o3.to_host_vec(&s), "copy o3")?, &w3, |a, b| a.to_bits() == b.to_bits())
    });

    report.check("packed_halves", || {
        let n = N / 2;
        let p: Vec<F16x2> = (0..n).map(|_| F16x2::from_f32(rng.next_f32() / 50.0, rng.next_f32() / 50.0)).collect();
        let q: Vec<Bf16x2> = (0..n).map(|_| Bf16x2::from_f32(rng.next_f32() / 50.0, rng.next_f32() / 50.0)).collect();
        let f = rng.vec_f32(2 * n);
        let (pd, qd, fd) = (
            ck(DeviceBuffer::from_host(&s, &p), "copy p")?,
            ck(DeviceBuffer::from_host(&s, &q), "copy q")?,
            ck(DeviceBuffer::from_host(&s, &f), "copy f")?,
        );
        let mut o1 = ck(DeviceBuffer::from_host(&s, &vec![F16x2::from_bits(0x7e00_7e00); n]), "poison o1")?;
        let mut o2 = ck(DeviceBuffer::from_host(&s, &vec![Bf16x2::from_bits(0x7fc0_7fc0); n]), "poison o2")?;
        let mut o3 = ck(DeviceBuffer::from_host(&s, &vec![0xdead_beefu32; n]), "poison o3")?;
        let mut o4 = ck(DeviceBuffer::from_host(&s, &vec![0xdead_beefu32; n]), "poison o4")?;
        ck(m.packed(&s, cfg(n), &pd, &qd, &fd, &mut o1, &mut o2, &mut o3, &mut o4), "launch packed")?;
        let close16 = |a: &F16x2, b: &F16x2| f16_ulps(a.lo(), b.lo()) <= 1 && f16_ulps(a.hi(), b.hi()) <= 1;
        let w1: Vec<F16x2> = p.iter().map(|&v| v.mul_add(v, v).max(-v)).collect();
        compare("f16x2 fma/max", &ck(o1.to_host_vec(&s), "copy o1")?, &w1, close16)?;
        let w2: Vec<[[bf16; 2]; 2]> = q
            .iter()
            .map(|&v| {
                let m = v.min(Bf16x2::splat(bf16::ZERO));
                [bf16_fma_or_not(v.lo(), v.lo(), m.lo()), bf16_fma_or_not(v.hi(), v.hi(), m.hi())]
            })
            .collect();
        let lanes_fused_or_not = |got: &Bf16x2, want: &[[bf16; 2]; 2]| {
            want[0].iter().any(|w| w.to_bits() == got.lo().to_bits())
                && want[1].iter().any(|w| w.to_bits() == got.hi().to_bits())
        };
        compare("bf16x2 mul/add/min", &ck(o2.to_host_vec(&s), "copy o2")?, &w2, lanes_fused_or_not)?;
        // Conversions round to nearest even on both sides: bit for bit.
        let w3: Vec<u32> = (0..n).map(|i| F16x2::new(f[2 * i] as f16, f[2 * i + 1] as f16).to_bits()).collect();
        compare("cvt.rn.f16x2.f32", &ck(o3.to_host_vec(&s), "copy o3")?, &w3, |a, b| a == b)?;
        let w4: Vec<u32> =
            (0..n).map(|i| Bf16x2::new(bf16::from_f32(f[2 * i]), bf16::from_f32(f[2 * i + 1])).to_bits()).collect();
        compare("cvt.rn.bf16x2.f32", &ck(o4.to_host_vec(&s), "copy o4")?, &w4, |a, b| a == b)
    });

    report.check("half_vectors_and_views", || {
        let n = N / 8;
        // k / 64 (f16) and k / 16 (bf16): the products and sums below are exact in f32, so one
        // rounding of them is what `fma.rn` computes.
        let mut f16s = |len: usize| -> Vec<f16> {
            (0..len).map(|_| ((rng.next_u32() % 513) as i32 - 256) as f16 / 64.0).collect()
        };
        let (a, b) = (f16s(8 * n), f16s(8 * n));
        let mut bf16s = |len: usize| -> Vec<bf16> {
            (0..len).map(|_| bf16::from_f32(((rng.next_u32() % 257) as i32 - 128) as f32 / 16.0)).collect()
        };
        let (c, d) = (bf16s(8 * n), bf16s(8 * n));
        let f16x8 =
            |v: &[f16]| -> Vec<F16x8> { v.chunks_exact(8).map(|l| F16x8::new(l.try_into().unwrap())).collect() };
        let bf16x8 =
            |v: &[bf16]| -> Vec<Bf16x8> { v.chunks_exact(8).map(|l| Bf16x8::new(l.try_into().unwrap())).collect() };
        let (ad, bd) = (
            ck(DeviceBuffer::from_host(&s, &f16x8(&a)), "copy a")?,
            ck(DeviceBuffer::from_host(&s, &f16x8(&b)), "copy b")?,
        );
        let (cd, dd) = (
            ck(DeviceBuffer::from_host(&s, &bf16x8(&c)), "copy c")?,
            ck(DeviceBuffer::from_host(&s, &bf16x8(&d)), "copy d")?,
        );
        // `x` of whole vectors (the vector path), then one element short of that (the scalar path).
        for len in [8 * n, 8 * n - 1] {
            let x: Vec<f16> = a[..len].to_vec();
            let xd = ck(DeviceBuffer::from_host(&s, &x), "copy x")?;
            let mut o1 = ck(DeviceBuffer::from_host(&s, &vec![F16x8::splat(f16::NAN); n]), "poison o1")?;
            let mut o2 = ck(DeviceBuffer::from_host(&s, &vec![Bf16x8::splat(bf16::NAN); n]), "poison o2")?;
            let mut o3 = ck(DeviceBuffer::from_host(&s, &vec![f16::NAN; len]), "poison o3")?;
            ck(
                m.half_vectors(&s, cfg(len), &ad, &bd, &cd, &dd, &xd, &mut o1, &mut o2, &mut o3),
                "launch half_vectors",
            )?;
            let w1: Vec<f16> = (0..8 * n)
                .map(|i| {
                    let fused = ((a[i] as f32) * (b[i] as f32) + a[i] as f32) as f16; // exact, rounded once
                    if fused >= -b[i] { fused } else { -b[i] }
                })
                .collect();
            let got1: Vec<f16> = ck(o1.to_host_vec(&s), "copy o1")?.iter().flat_map(|v| v.to_array()).collect();
            // By value: `max` may pick either zero of a +0/-0 pair.
            compare("F16x8 fma/max", &got1, &w1, |g, w| g == w)?;
            let w2: Vec<bf16> = (0..8 * n)
                .map(|i| {
                    let fused = bf16_of_f64((c[i].to_f32() * d[i].to_f32() + c[i].to_f32()) as f64);
                    bf16_of_f64(fused.to_f32() as f64 - d[i].to_f32() as f64)
                })
                .collect();
            let got2: Vec<bf16> = ck(o2.to_host_vec(&s), "copy o2")?.iter().flat_map(|v| v.to_array()).collect();
            compare("Bf16x8 fma/sub", &got2, &w2, |g, w| g.to_f32() == w.to_f32())?;
            let w3: Vec<f16> = x.iter().map(|&v| v + v).collect();
            compare(&format!("&[f16] of {len} doubled"), &ck(o3.to_host_vec(&s), "copy o3")?, &w3, |g, w| {
                g.to_bits() == w.to_bits()
            })?;
        }
        Ok(())
    });

    report.check("fast_math_is_close_and_ieee_is_exact_enough", || {
        let x: Vec<f32> = (0..N).map(|_| (rng.next_f32() + 1000.0) / 500.0).collect(); // [0, 4)
        let xd = ck(DeviceBuffer::from_host(&s, &x), "copy x")?;
        let want: Vec<f64> = x
            .iter()
            .map(|&v| {
                let v = v as f64;
                v.exp() / (v + 1.0).sqrt() + 1.0 / (v + 2.0).sqrt() + v.ln_1p().sin()
            })
            .collect();
        for (name, fast) in [("fast_fns", true), ("ieee_fns", false)] {
            let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; N]), "poison out")?;
            if fast {
                ck(m.fast_fns(&s, cfg(N), &xd, &mut od), "launch fast_fns")?;
            } else {
                ck(m.ieee_fns(&s, cfg(N), &xd, &mut od), "launch ieee_fns")?;
            }
            let got = ck(od.to_host_vec(&s), "copy out")?;
            let tol = if fast { 2e-5 } else { 2e-6 };
            if let Some(i) = (0..N).find(|&i| !got[i].is_finite() || ((got[i] as f64 - want[i]) / want[i]).abs() > tol)
            {
                return Err(format!(
                    "{name}[{i}] = {} for x = {}, expected {} (relative tolerance {tol})",
                    got[i], x[i], want[i]
                ));
            }
        }
        Ok(())
    });

    report.check("cp_async_tiles_with_zero_fill", || {
        let blocks = 64;
        let n = blocks * 1024;
        let x = rng.vec_f32(n);
        let xv: Vec<F32x4> = x.chunks_exact(4).map(|c| F32x4::new([c[0], c[1], c[2], c[3]])).collect();
        let xd = ck(DeviceBuffer::from_host(&s, &xv), "copy x")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; n]), "poison out")?;
        let c = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        ck(m.async_tile(&s, c, &xd, &mut od), "launch async_tile")?;
        let mut want = vec![0f32; n];
        for b in 0..blocks {
            let mut tile: Vec<f32> = x[b * 1024..(b + 1) * 1024].to_vec();
            tile[1022] = 0.0; // the zero-filled upper half of the last thread's 16 bytes
            tile[1023] = 0.0;
            for (e, w) in want[b * 1024..(b + 1) * 1024].iter_mut().enumerate() {
                *w = tile[1023 - e];
            }
        }
        compare("async_tile", &ck(od.to_host_vec(&s), "copy out back")?, &want, |a, b| a.to_bits() == b.to_bits())
    });

    report.check("unroll_hints_keep_results", || {
        let x = rng.vec_f32(N);
        let xd = ck(DeviceBuffer::from_host(&s, &x), "copy x")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; N / 8]), "poison out")?;
        ck(m.unrolled(&s, cfg(N / 8), &xd, &mut od), "launch unrolled")?;
        let want: Vec<f32> = (0..N / 8)
            .map(|i| {
                let mut acc = 0.0f32;
                for k in 0..8 {
                    acc = x[(8 * i + k) % N].mul_add((k + 1) as f32, acc);
                }
                acc + 45.0 - 3.0
            })
            .collect();
        let got = ck(od.to_host_vec(&s), "copy out back")?;
        compare("unrolled", &got, &want, |a, b| (a - b).abs() <= 1e-3 * (1.0 + b.abs()))
    });

    report.check("constant_memory_initial_then_written", || {
        let x = rng.vec_f32(N);
        let xd = ck(DeviceBuffer::from_host(&s, &x), "copy x")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; N]), "poison out")?;
        ck(m.const_scale(&s, cfg(N), &xd, &mut od), "launch const_scale")?;
        let scaled = |k: [f32; 4]| -> Vec<f32> { x.iter().enumerate().map(|(i, v)| v.mul_add(k[i % 4], k[0])).collect() };
        let close = |a: &f32, b: &f32| (a - b).abs() <= 1e-5 * (1.0 + b.abs());
        compare("initial scales", &ck(od.to_host_vec(&s), "copy out")?, &scaled([1.0, 2.0, 3.0, 4.0]), close)?;
        // The sideloaded module has its own copy of SCALES: write it, launch there, read it back.
        let side = ck(load_kernel_module(&ctx, "gpu_perf_types"), "load_kernel_module(gpu_perf_types)")?;
        let new = [0.5f32, -1.0, 8.0, 0.25];
        ck(side.module().write_global(&s, "SCALES", &new), "write_global SCALES")?;
        let back: [f32; 4] = ck(side.module().read_global(&s, "SCALES"), "read_global SCALES")?;
        if back != new {
            return Err(format!("read_global gave {back:?}, wrote {new:?}"));
        }
        let mut od2 = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; N]), "poison out")?;
        ck(
            cuda_launch! { kernel: const_scale, stream: s, module: side, config: cfg(N), args: [slice(xd), slice_mut(od2)] },
            "cuda_launch! const_scale",
        )?;
        ck(s.synchronize(), "synchronize")?;
        compare("written scales", &ck(od2.to_host_vec(&s), "copy out")?, &scaled(new), close)?;
        if ck(side.module().write_global(&s, "SCALES", &[0.0f32; 3]), "size check").is_ok() {
            return Err("write_global accepted a value of the wrong size".into());
        }
        // The same on the module `kernels::load` gave: by name, through the generated methods.
        let newer = [rng.next_f32(), rng.next_f32(), rng.next_f32(), rng.next_f32()];
        ck(m.write_global(&s, "SCALES", &newer), "generated write_global SCALES")?;
        let back: [f32; 4] = ck(m.read_global(&s, "SCALES"), "generated read_global SCALES")?;
        if back != newer {
            return Err(format!("generated read_global gave {back:?}, wrote {newer:?}"));
        }
        let mut od3 = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; N]), "poison out")?;
        ck(m.const_scale(&s, cfg(N), &xd, &mut od3), "launch const_scale")?;
        compare("scales written on the generated module", &ck(od3.to_host_vec(&s), "copy out")?, &scaled(newer), close)?;
        if m.write_global(&s, "NO_SUCH_GLOBAL", &1.0f32).is_ok() {
            return Err("write_global of a global no device code has succeeded".into());
        }
        Ok(())
    });

    report.finish()
}
