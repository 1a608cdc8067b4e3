//! GPU test of the device operations added under NVIDIA cuda-oxide's names (issue 10), each
//! against a CPU reference on random inputs with the output poisoned first: the `f16x2` FMA
//! variants with flush-to-zero, saturation and ReLU (subnormal inputs included); `cvt.rz` to
//! f16/bf16 pairs, `cvt.rn.bf16x2` (`tcgen05::cvt_f32x2_bf16x2`) and `cvt.rna.tf32`; the packed
//! atomic adds `atom.add.noftz.{f16x2,bf16x2}` (sm_90); the s8 `mma.sync` m16n8k32 of `wmma`; and
//! `ptx_asm!` with every kind of operand (`r l f d h` registers, `inout`, `"n"` and `"C"`
//! constants, a memory store with `clobber("memory")`, `%%laneid`).
#![feature(f16)]

use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, atomic, convert, cuda_module, f16x2, kernel, ptx_asm, tcgen05, thread, wmma};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn fma_variants(a: &[u32], b: &[u32], c: &[u32], mut out: DisjointSlice<[u32; 4]>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = [
                f16x2::fma_ftz_f16x2(a[i], b[i], c[i]),
                f16x2::fma_sat_f16x2(a[i], b[i], c[i]),
                f16x2::fma_ftz_sat_f16x2(a[i], b[i], c[i]),
                f16x2::fma_ftz_relu_f16x2(a[i], b[i], c[i]),
            ];
        }
    }

    #[kernel]
    pub fn conversions(lo: &[f32], hi: &[f32], mut out: DisjointSlice<[u32; 5]>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = [
                convert::cvt_rz_f16x2_f32(lo[i], hi[i]),
                convert::cvt_rz_bf16x2_f32(lo[i], hi[i]),
                tcgen05::cvt_f32x2_bf16x2(lo[i], hi[i]),
                convert::cvt_rna_tf32_f32(lo[i]),
                convert::cvt_rna_tf32_f32(hi[i]),
            ];
        }
    }

    /// Each thread adds its f16 pair to `sums[0]` and its bf16 pair to `sums[1]`; `old` gets the
    /// pairs it saw there.
    #[kernel]
    pub fn packed_adds(h: &[u32], b: &[u32], sums: &mut [u32], mut old: DisjointSlice<[u32; 2]>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let p = sums.as_mut_ptr();
        if sums.len() >= 2
            && let Some(o) = old.get_mut(idx)
        {
            // SAFETY: `sums[0..2]` is only accessed by these atomics while the kernel runs.
            *o = unsafe { [atomic::atom_add_f16x2(p, h[i]), atomic::atom_add_bf16x2(p.add(1), b[i])] };
        }
    }

    /// One warp: `d = a·b + c` for a 16×8 tile, `a` 16×32 row-major and `b` 32×8 (k-major) `i8`,
    /// each lane gathering its fragments by the PTX ISA's m16n8k32 layout.
    #[kernel]
    pub fn mma_s8(a: &[i8], b: &[i8], c: &[i32], mut d: DisjointSlice<[i32; 4]>) {
        let idx = thread::index_1d();
        let lane = idx.get() % 32;
        let (g, t) = (lane / 4, lane % 4);
        let mut fa = [0u32; 4];
        for (r, word) in fa.iter_mut().enumerate() {
            for j in 0..4 {
                let (row, col) = a_coord(g, t, 4 * r + j);
                *word |= (a[row * 32 + col] as u8 as u32) << (8 * j);
            }
        }
        let mut fb = [0u32; 2];
        for (r, word) in fb.iter_mut().enumerate() {
            for j in 0..4 {
                let (k, n) = b_coord(g, t, 4 * r + j);
                *word |= (b[k * 8 + n] as u8 as u32) << (8 * j);
            }
        }
        let fc = [0, 1, 2, 3].map(|i| {
            let (row, col) = c_coord(g, t, i);
            c[row * 8 + col]
        });
        // SAFETY: all 32 lanes of the one warp get here together.
        let out = unsafe { wmma::mma_m16n8k32_s32_s8(fc, fa, fb) };
        if let Some(o) = d.get_mut(idx) {
            *o = out;
        }
    }

    /// `ptx_asm!` with each kind of operand; `flags[i]` is written by a PTX store.
    #[kernel]
    pub fn inline_ptx(x: &[u32], y: &[f32], z: &[f64], mut out: DisjointSlice<[u64; 6]>, flags: &mut [u32]) {
        let idx = thread::index_1d();
        let i = idx.get();
        if i < flags.len()
            && let Some(o) = out.get_mut(idx)
        {
            const WIDE: &[u8; 6] = b".wide\0";
            let (sum, wide, fused, lane): (u32, u64, f32, u32);
            let mut acc = z[i];
            let mut half = x[i] as u16;
            let flag = flags.as_mut_ptr();
            // SAFETY: the statements touch their operands and `flags[i]` (this thread's) only.
            unsafe {
                ptx_asm!("add.u32 %0, %1, %2;", out("=r") sum, in("r") x[i], in("n") 7, options(register_only));
                ptx_asm!("mul%1.u32 %0, %2, %2;", out("=l") wide, in("C") WIDE, in("r") x[i], options(register_only));
                ptx_asm!(
                    "fma.rn.f32 %0, %1, %2, %3;",
                    out("=f") fused,
                    in("f") y[i],
                    in("f") y[i],
                    in("f") 1.5f32,
                    options(register_only)
                );
                ptx_asm!("add.f64 %0, %0, %1;", inout("+d") acc, in("d") 0.25f64, options(register_only));
                ptx_asm!("xor.b16 %0, %0, %1;", inout("+h") half, in("h") 0x5a5au16, options(register_only));
                ptx_asm!("mov.u32 %0, %%laneid;", out("=r") lane);
                ptx_asm!(
                    "{ .reg .u32 t;\n\tmov.u32 t, %1;\n\tst.u32 [%0], t; }",
                    in("l") flag.add(i),
                    in("r") sum ^ 1,
                    clobber("memory")
                );
            }
            *o = [sum as u64, wide, fused.to_bits() as u64, acc.to_bits(), half as u64, lane as u64];
        }
    }
}

/// Element `e` (0..16) of this lane's A fragment of `mma.m16n8k32` with 8-bit elements: (row, col).
pub fn a_coord(g: usize, t: usize, e: usize) -> (usize, usize) {
    let row = if e < 4 || (8..12).contains(&e) { g } else { g + 8 };
    (row, 4 * t + (e & 3) + if e >= 8 { 16 } else { 0 })
}

/// Element `e` (0..8) of this lane's B fragment: (k, n).
pub fn b_coord(g: usize, t: usize, e: usize) -> (usize, usize) {
    (4 * t + (e & 3) + if e >= 4 { 16 } else { 0 }, g)
}

/// Element `e` (0..4) of this lane's C/D fragment: (row, col).
pub fn c_coord(g: usize, t: usize, e: usize) -> (usize, usize) {
    (g + if e >= 2 { 8 } else { 0 }, 2 * t + (e & 1))
}

const N: usize = 1 << 14;

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig::for_num_elems(n as u32)
}

/// A random f16 of magnitude below 5, or (one in four) a subnormal.
fn random_f16(rng: &mut Lcg) -> u16 {
    let r = rng.next_u32();
    if r % 4 == 0 { (r >> 16) as u16 & 0x83ff | 1 } else { ((rng.next_f32() / 200.0) as f16).to_bits() }
}

fn lanes(x: u32) -> [f16; 2] {
    [f16::from_bits(x as u16), f16::from_bits((x >> 16) as u16)]
}

fn ftz(h: f16) -> f16 {
    if h.to_bits() & 0x7c00 == 0 { f16::from_bits(h.to_bits() & 0x8000) } else { h }
}

/// `fma.rn{.ftz}.f16x2` then `post`, per lane: the product is exact in f64 and the sum rounds
/// once there, so only the final rounding to f16 matters.
fn fma_ref(a: u32, b: u32, c: u32, flush: bool, post: fn(f16) -> f16) -> [f16; 2] {
    let f = |h: f16| if flush { ftz(h) } else { h };
    let (a, b, c) = (lanes(a), lanes(b), lanes(c));
    [0, 1].map(|i| f(post(f((f(a[i]) as f64 * f(b[i]) as f64 + f(c[i]) as f64) as f16))))
}

fn sat(h: f16) -> f16 {
    if h.is_nan() { 0.0 } else { h.clamp(0.0, 1.0) }
}

fn relu(h: f16) -> f16 {
    if h < 0.0 { 0.0 } else { h }
}

/// Equal values (`+0 == -0`), or both NaN.
fn same_f16(got: u32, want: [f16; 2]) -> bool {
    lanes(got).iter().zip(want).all(|(g, w)| g == &w || (g.is_nan() && w.is_nan()))
}

/// `got` is `x` rounded toward zero to the format whose `bits` widen by `widen`: not larger in
/// magnitude than `x`, of its sign (or zero), and the next value away from zero is larger.
fn is_rz(x: f32, got: u16, widen: fn(u16) -> f32) -> bool {
    let g = widen(got);
    let next = widen((got & 0x7fff) + 1);
    (g == 0.0 || g.is_sign_negative() == x.is_sign_negative()) && g.abs() <= x.abs() && next > x.abs()
}

fn widen_f16(b: u16) -> f32 {
    f16::from_bits(b) as f32
}

fn widen_bf16(b: u16) -> f32 {
    f32::from_bits((b as u32) << 16)
}

/// TensorFloat-32: nearest, ties away from zero, in the 19 high bits.
fn tf32_rna(x: f32) -> u32 {
    x.to_bits().wrapping_add(0x1000) & !0x1fff
}

fn main() {
    let mut report = Report::new("compat-half");
    let mut rng = Lcg::from_env_or_clock();
    let (_ctx, s, m) = report.load(kernels::load);

    report.check("f16x2_fma_ftz_sat_relu", || {
        let pair = |rng: &mut Lcg| random_f16(rng) as u32 | (random_f16(rng) as u32) << 16;
        let (a, b, c): (Vec<u32>, Vec<u32>, Vec<u32>) =
            (0..N).map(|_| (pair(&mut rng), pair(&mut rng), pair(&mut rng))).collect();
        let (ad, bd, cd) = (
            ck(DeviceBuffer::from_host(&s, &a), "copy a")?,
            ck(DeviceBuffer::from_host(&s, &b), "copy b")?,
            ck(DeviceBuffer::from_host(&s, &c), "copy c")?,
        );
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![[0x7e01_7e01u32; 4]; N]), "poison out")?;
        ck(m.fma_variants(&s, cfg(N), &ad, &bd, &cd, &mut od), "launch fma_variants")?;
        let got = ck(od.to_host_vec(&s), "copy out back")?;
        let id: fn(f16) -> f16 = |h| h;
        for (k, (name, flush, post)) in [
            ("fma_ftz", true, id),
            ("fma_sat", false, sat as fn(f16) -> f16),
            ("fma_ftz_sat", true, sat),
            ("fma_ftz_relu", true, relu),
        ]
        .into_iter()
        .enumerate()
        {
            let want: Vec<[f16; 2]> = (0..N).map(|i| fma_ref(a[i], b[i], c[i], flush, post)).collect();
            let got_k: Vec<u32> = got.iter().map(|o| o[k]).collect();
            let as_bits: Vec<u32> =
                want.iter().map(|w| w[0].to_bits() as u32 | (w[1].to_bits() as u32) << 16).collect();
            compare(name, &got_k, &as_bits, |g, w| same_f16(*g, lanes(*w)))?;
        }
        Ok(())
    });

    report.check("cvt_rz_rn_and_tf32", || {
        let mut lo = rng.vec_f32(N);
        let mut hi = rng.vec_f32(N);
        // Overflow, underflow, zeros and exact tf32 ties among the random values.
        let specials = [0.0, -0.0, 1.0e6, -7.0e4, 1.0e-9, -3.0e-6, 3.0e38, f32::from_bits(0x3f80_1000)];
        lo[..specials.len()].copy_from_slice(&specials);
        hi[..specials.len()].copy_from_slice(&specials.map(|v: f32| -v * 0.75));
        let (ld, hd) =
            (ck(DeviceBuffer::from_host(&s, &lo), "copy lo")?, ck(DeviceBuffer::from_host(&s, &hi), "copy hi")?);
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![[0xdead_beefu32; 5]; N]), "poison out")?;
        ck(m.conversions(&s, cfg(N), &ld, &hd, &mut od), "launch conversions")?;
        let got = ck(od.to_host_vec(&s), "copy out back")?;
        let idx: Vec<usize> = (0..N).collect();
        let ok_rz = |i: &usize, _: &usize, k: usize, widen: fn(u16) -> f32| {
            let w = got[*i][k];
            is_rz(lo[*i], w as u16, widen) && is_rz(hi[*i], (w >> 16) as u16, widen)
        };
        compare("cvt_rz_f16x2_f32", &idx, &idx, |i, j| ok_rz(i, j, 0, widen_f16))?;
        compare("cvt_rz_bf16x2_f32", &idx, &idx, |i, j| ok_rz(i, j, 1, widen_bf16))?;
        let rn: Vec<u32> = (0..N)
            .map(|i| {
                let (l, h) = (cuda_device::half::bf16::from_f32(lo[i]), cuda_device::half::bf16::from_f32(hi[i]));
                l.to_bits() as u32 | (h.to_bits() as u32) << 16
            })
            .collect();
        compare("tcgen05::cvt_f32x2_bf16x2", &got.iter().map(|o| o[2]).collect::<Vec<_>>(), &rn, |a, b| a == b)?;
        let tf: Vec<[u32; 2]> = (0..N).map(|i| [tf32_rna(lo[i]), tf32_rna(hi[i])]).collect();
        let got_tf: Vec<[u32; 2]> = got.iter().map(|o| [o[3] & !0x1fff, o[4] & !0x1fff]).collect();
        compare("cvt_rna_tf32_f32", &got_tf, &tf, |a, b| a == b)
    });

    report.check("packed_atomic_adds", || {
        const T: usize = 64;
        // Small integers: every partial sum (at most 192) is exact in f16 and bf16.
        let small = |rng: &mut Lcg| (rng.next_u32() % 4) as f32;
        let hv: Vec<[f32; 2]> = (0..T).map(|_| [small(&mut rng), small(&mut rng)]).collect();
        let bv: Vec<[f32; 2]> = (0..T).map(|_| [small(&mut rng), small(&mut rng)]).collect();
        let pack_h = |v: &[f32; 2]| (v[0] as f16).to_bits() as u32 | ((v[1] as f16).to_bits() as u32) << 16;
        let pack_b = |v: &[f32; 2]| (v[0].to_bits() >> 16) | (v[1].to_bits() & 0xffff_0000);
        let (h, b): (Vec<u32>, Vec<u32>) = (hv.iter().map(pack_h).collect(), bv.iter().map(pack_b).collect());
        let (hd, bd) = (ck(DeviceBuffer::from_host(&s, &h), "copy h")?, ck(DeviceBuffer::from_host(&s, &b), "copy b")?);
        let mut sums = ck(DeviceBuffer::from_host(&s, &[0u32, 0u32]), "zero sums")?;
        let mut old = ck(DeviceBuffer::from_host(&s, &vec![[u32::MAX; 2]; T]), "poison old")?;
        ck(m.packed_adds(&s, cfg(T), &hd, &bd, &mut sums, &mut old), "launch packed_adds")?;
        let total = |v: &[[f32; 2]], lane: usize| v.iter().map(|p| p[lane]).sum::<f32>();
        let want = [pack_h(&[total(&hv, 0), total(&hv, 1)]), pack_b(&[total(&bv, 0), total(&bv, 1)])];
        compare("final sums", &ck(sums.to_host_vec(&s), "copy sums back")?, &want, |a, b| a == b)?;
        // What each thread saw plus what it added never exceeds the total.
        let seen = ck(old.to_host_vec(&s), "copy old back")?;
        for (i, o) in seen.iter().enumerate() {
            let (sh, sb) = (lanes(o[0]), [widen_bf16(o[1] as u16), widen_bf16((o[1] >> 16) as u16)]);
            for lane in 0..2 {
                let fits_h = sh[lane] as f32 + hv[i][lane] <= total(&hv, lane) && sh[lane] >= 0.0;
                let fits_b = sb[lane] + bv[i][lane] <= total(&bv, lane) && sb[lane] >= 0.0;
                if !fits_h || !fits_b {
                    return Err(format!("thread {i} saw {o:08x?}: not a partial sum"));
                }
            }
        }
        Ok(())
    });

    report.check("mma_m16n8k32_s8", || {
        let a: Vec<i8> = (0..16 * 32).map(|_| rng.next_u32() as i8).collect();
        let b: Vec<i8> = (0..32 * 8).map(|_| rng.next_u32() as i8).collect();
        let c: Vec<i32> = (0..16 * 8).map(|_| (rng.next_u32() % 20001) as i32 - 10000).collect();
        let (ad, bd, cd) = (
            ck(DeviceBuffer::from_host(&s, &a), "copy a")?,
            ck(DeviceBuffer::from_host(&s, &b), "copy b")?,
            ck(DeviceBuffer::from_host(&s, &c), "copy c")?,
        );
        let mut dd = ck(DeviceBuffer::from_host(&s, &[[i32::MIN; 4]; 32]), "poison d")?;
        let one_warp = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
        ck(m.mma_s8(&s, one_warp, &ad, &bd, &cd, &mut dd), "launch mma_s8")?;
        let got = ck(dd.to_host_vec(&s), "copy d back")?;
        let want: Vec<[i32; 4]> = (0..32)
            .map(|lane| {
                [0, 1, 2, 3].map(|e| {
                    let (row, col) = c_coord(lane / 4, lane % 4, e);
                    let dot: i32 = (0..32).map(|k| a[row * 32 + k] as i32 * b[k * 8 + col] as i32).sum();
                    dot.wrapping_add(c[row * 8 + col])
                })
            })
            .collect();
        compare("mma_m16n8k32_s32_s8", &got, &want, |a, b| a == b)
    });

    report.check("ptx_asm_operands", || {
        let x: Vec<u32> = (0..N).map(|_| rng.next_u32()).collect();
        let y = rng.vec_f32(N);
        let z: Vec<f64> = (0..N).map(|_| rng.next_f64()).collect();
        let (xd, yd, zd) = (
            ck(DeviceBuffer::from_host(&s, &x), "copy x")?,
            ck(DeviceBuffer::from_host(&s, &y), "copy y")?,
            ck(DeviceBuffer::from_host(&s, &z), "copy z")?,
        );
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![[u64::MAX; 6]; N]), "poison out")?;
        let mut fd = ck(DeviceBuffer::from_host(&s, &vec![0xdead_beefu32; N]), "poison flags")?;
        ck(m.inline_ptx(&s, cfg(N), &xd, &yd, &zd, &mut od, &mut fd), "launch inline_ptx")?;
        let want: Vec<[u64; 6]> = (0..N)
            .map(|i| {
                [
                    x[i].wrapping_add(7) as u64,
                    x[i] as u64 * x[i] as u64,
                    y[i].mul_add(y[i], 1.5).to_bits() as u64,
                    (z[i] + 0.25).to_bits(),
                    (x[i] as u16 ^ 0x5a5a) as u64,
                    (i % 32) as u64,
                ]
            })
            .collect();
        compare("ptx_asm! results", &ck(od.to_host_vec(&s), "copy out back")?, &want, |a, b| a == b)?;
        let flags: Vec<u32> = x.iter().map(|v| v.wrapping_add(7) ^ 1).collect();
        compare("ptx_asm! store", &ck(fd.to_host_vec(&s), "copy flags back")?, &flags, |a, b| a == b)
    });

    report.finish()
}
