//! GPU test: every parameter kind of the launch chapter's table through the typed methods —
//! `&[T]`, `&mut [T]`, `DisjointSlice<T>`, scalars of every width (bool, char, i128, f64 …), raw
//! pointers, closures (two from one function, one capturing two types), by-value structs (one
//! with an `Option` field), zero-sized values — plus the chapter's 2D launch (16×16 blocks) and
//! three instantiations of one generic kernel. Random inputs, poisoned outputs, CPU reference.
use std::marker::PhantomData;
use std::sync::Arc;

use cuda_core::{CudaContext, CudaStream, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, same_bits_f32};

/// Passed by value: one byval parameter with the host layout (mixed alignments and a bool).
#[derive(Clone, Copy, Debug)]
pub struct Affine {
    pub a: f32,
    pub b: f64,
    pub n: u8,
    pub flag: bool,
}

/// A by-value struct with an `Option` field (an enum with a discriminant inside the blob).
#[derive(Clone, Copy, Debug)]
pub struct Shift {
    pub offset: Option<i32>,
    pub scale: i32,
}

/// 8 KB by value: more than PTX's classic 4 KB parameter space, so the build uses PTX ISA 8.1.
#[derive(Clone, Copy, Debug)]
pub struct Table {
    pub values: [u32; 2048],
}

/// A zero-sized kernel argument: the kernel has no PTX parameter for it.
#[derive(Clone, Copy, Debug)]
pub struct Tag;

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn slices(a: &[i32], b: &mut [i32], mut c: DisjointSlice<i32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if i < b.len() {
            b[i] = b[i].wrapping_add(a[i]);
        }
        if let Some(c_elem) = c.get_mut(idx) {
            *c_elem = a[i].wrapping_mul(2);
        }
    }

    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn scalars(
        a: u8,
        b: u16,
        c: u32,
        d: u64,
        e: u128,
        f: usize,
        g: i8,
        h: i16,
        i: i32,
        j: i64,
        k: i128,
        l: isize,
        m: f32,
        n: f64,
        o: bool,
        p: char,
        out: &mut [u64],
    ) {
        if thread::index_1d().get() != 0 {
            return;
        }
        out[0] = a.wrapping_add(1) as u64;
        out[1] = b.wrapping_mul(3) as u64;
        out[2] = (c ^ 0xdead_beef) as u64;
        out[3] = d ^ (d >> 7);
        out[4] = e.wrapping_mul(5) as u64;
        out[5] = (e.wrapping_mul(5) >> 64) as u64;
        out[6] = f.wrapping_add(11) as u64;
        out[7] = g.wrapping_neg() as u64;
        out[8] = h.wrapping_sub(100) as u64;
        out[9] = i.wrapping_mul(-7) as u64;
        out[10] = j.wrapping_add(j >> 3) as u64;
        out[11] = k.wrapping_mul(-3) as u64;
        out[12] = (k.wrapping_mul(-3) >> 64) as u64;
        out[13] = l.wrapping_mul(2) as u64;
        out[14] = (m * 2.0).to_bits() as u64;
        out[15] = (n * 0.5).to_bits();
        out[16] = !o as u64;
        out[17] = p as u64 + 1;
    }

    #[kernel]
    pub fn raw_ptrs(src: *const f32, dst: *mut f32, n: usize) {
        let i = thread::index_1d().get();
        if i < n {
            // SAFETY: the host passes two buffers of at least `n` elements.
            unsafe { *dst.add(i) = *src.add(i) * 2.0 + 1.0 };
        }
    }

    #[kernel]
    pub fn map<F: Fn(f32) -> f32>(f: F, input: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = f(input[i]);
        }
    }

    #[kernel]
    pub fn scale<T: Copy + core::ops::Mul<Output = T>>(k: T, data: &mut [T]) {
        let i = thread::index_1d().get();
        if i < data.len() {
            data[i] = data[i] * k;
        }
    }

    #[kernel]
    pub fn affine(p: Affine, input: &[f32], mut out: DisjointSlice<f64>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            let v = input[i] as f64 + p.b;
            let v = if p.flag { v * 2.0 } else { v - p.n as f64 };
            *o = v + p.a as f64;
        }
    }

    #[kernel]
    pub fn shift(s: Shift, input: &[i32], mut out: DisjointSlice<i32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = input[i].wrapping_mul(s.scale).wrapping_add(s.offset.unwrap_or(-1));
        }
    }

    #[kernel]
    pub fn zst(t: Tag, x: u32, u: (), mut out: DisjointSlice<u32>, p: PhantomData<f64>) {
        let _ = (t, u, p);
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = x.wrapping_add(i as u32);
        }
    }

    /// Named like the printf runtime function: its entry gets a keyed name, so `gpu_printf!`
    /// (in `say_once`) still reaches the real `vprintf`.
    #[kernel]
    pub fn vprintf(mut out: DisjointSlice<u32>, x: u32) {
        let idx = thread::index_1d();
        let i = idx.get() as u32;
        if let Some(o) = out.get_mut(idx) {
            *o = x ^ i;
        }
    }

    #[kernel]
    pub fn say_once(x: u32) {
        if thread::index_1d().get() == 0 {
            cuda_device::gpu_printf!("params: say_once %u\n", x);
        }
    }

    /// Named like libdevice's sine, and calling it.
    #[kernel]
    pub fn __nv_sinf(a: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = a[i].sin();
        }
    }

    #[kernel]
    pub fn big_param(table: Table, idx_in: &[u32], mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = table.values[(idx_in[i] % 2048) as usize];
        }
    }

    #[kernel]
    pub fn add2d(a: &[f32], b: &[f32], c: &mut [f32], mut lin: DisjointSlice<u32>, rows: u32, cols: u32) {
        let col = thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x();
        let row = thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y();
        if row < rows && col < cols {
            let i = (row * cols + col) as usize;
            c[i] = a[i] + b[i];
        }
        // SAFETY: `cols` is a kernel parameter, the same in every thread.
        if let Some(idx) = unsafe { thread::index_2d_xy().to_linear(cols as usize) } {
            if let Some(l) = lin.get_mut(idx) {
                *l = row * cols + col;
            }
        }
    }
}

const N: usize = 100_003;
const POISON_I32: i32 = 0x5a5a_5a5a;

fn main() {
    let mut report = Report::new("params");
    let mut rng = Lcg::from_env_or_clock();
    let (ctx, stream, module) = report.setup(|| {
        let ctx = ck(CudaContext::new(0), "CudaContext::new(0)")?;
        let stream = ck(ctx.new_stream(), "new_stream")?;
        let module = ck(kernels::load(&ctx), "kernels::load")?;
        Ok((ctx, stream, module))
    });
    let _: &Arc<CudaContext> = &ctx;
    let s: &Arc<CudaStream> = &stream;
    let m = &module;

    report.check("slice_and_slice_mut_and_disjoint", || {
        let a: Vec<i32> = (0..N).map(|_| rng.next_u64() as i32).collect();
        let b: Vec<i32> = (0..N).map(|_| rng.next_u64() as i32).collect();
        let a_dev = ck(DeviceBuffer::from_host(s, &a), "copy a")?;
        let mut b_dev = ck(DeviceBuffer::from_host(s, &b), "copy b")?;
        let mut c_dev = ck(DeviceBuffer::from_host(s, &vec![POISON_I32; N]), "poison c")?;
        ck(m.slices(s, LaunchConfig::for_num_elems(N as u32), &a_dev, &mut b_dev, &mut c_dev), "launch slices")?;
        ck(s.synchronize(), "synchronize after slices")?;
        let want_b: Vec<i32> = a.iter().zip(&b).map(|(x, y)| y.wrapping_add(*x)).collect();
        let want_c: Vec<i32> = a.iter().map(|x| x.wrapping_mul(2)).collect();
        compare("&mut [i32]", &ck(b_dev.to_host_vec(s), "copy b back")?, &want_b, |x, y| x == y)?;
        compare("DisjointSlice<i32>", &ck(c_dev.to_host_vec(s), "copy c back")?, &want_c, |x, y| x == y)
    });

    report.check("scalars_of_every_width", || {
        let (a, b, c, d) = (rng.next_u64() as u8, rng.next_u64() as u16, rng.next_u64() as u32, rng.next_u64());
        let e = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
        let f = rng.next_u64() as usize;
        let (g, h, i, j) = (rng.next_u64() as i8, rng.next_u64() as i16, rng.next_u64() as i32, rng.next_u64() as i64);
        let k = ((u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())) as i128;
        let l = rng.next_u64() as isize;
        let (mm, n, o) = (rng.next_f32(), rng.next_f64(), rng.next_u64() & 1 == 1);
        let p = char::from_u32(0x4e00 + (rng.next_u64() % 0x5000) as u32).unwrap_or('中');
        let want: Vec<u64> = vec![
            a.wrapping_add(1) as u64,
            b.wrapping_mul(3) as u64,
            (c ^ 0xdead_beef) as u64,
            d ^ (d >> 7),
            e.wrapping_mul(5) as u64,
            (e.wrapping_mul(5) >> 64) as u64,
            f.wrapping_add(11) as u64,
            g.wrapping_neg() as u64,
            h.wrapping_sub(100) as u64,
            i.wrapping_mul(-7) as u64,
            j.wrapping_add(j >> 3) as u64,
            k.wrapping_mul(-3) as u64,
            (k.wrapping_mul(-3) >> 64) as u64,
            l.wrapping_mul(2) as u64,
            (mm * 2.0).to_bits() as u64,
            (n * 0.5).to_bits(),
            !o as u64,
            p as u64 + 1,
        ];
        let mut out = ck(DeviceBuffer::from_host(s, &vec![0xabab_abab_abab_abab_u64; want.len()]), "poison out")?;
        let cfg = LaunchConfig::for_num_elems(32);
        ck(m.scalars(s, cfg, a, b, c, d, e, f, g, h, i, j, k, l, mm, n, o, p, &mut out), "launch scalars")?;
        ck(s.synchronize(), "synchronize after scalars")?;
        let names = [
            "u8", "u16", "u32", "u64", "u128 lo", "u128 hi", "usize", "i8", "i16", "i32", "i64", "i128 lo", "i128 hi",
            "isize", "f32", "f64", "bool", "char",
        ];
        let got = ck(out.to_host_vec(s), "copy out back")?;
        for (idx, name) in names.iter().enumerate() {
            if got[idx] != want[idx] {
                return Err(format!("scalar {name}: gpu {:#x} cpu {:#x}", got[idx], want[idx]));
            }
        }
        Ok(())
    });

    report.check("raw_pointers", || {
        let src = rng.vec_f32(N);
        let src_dev = ck(DeviceBuffer::from_host(s, &src), "copy src")?;
        let dst_dev = ck(DeviceBuffer::from_host(s, &vec![f32::NAN; N]), "poison dst")?;
        let (sp, dp) = (src_dev.as_device_ptr() as *const f32, dst_dev.as_device_ptr() as *mut f32);
        ck(m.raw_ptrs(s, LaunchConfig::for_num_elems(N as u32), sp, dp, N), "launch raw_ptrs")?;
        ck(s.synchronize(), "synchronize after raw_ptrs")?;
        let want: Vec<f32> = src.iter().map(|x| x * 2.0 + 1.0).collect();
        compare("*mut f32", &ck(dst_dev.to_host_vec(s), "copy dst back")?, &want, same_bits_f32)
    });

    let input = rng.vec_f32(N);
    let k = rng.next_f32();
    let (kd, n16) = (rng.next_f64(), rng.next_u64() as u16);
    // Two closures of one function (same `type_name`, different types) and one capturing two types.
    let times_k = move |x: f32| x * k;
    let plus_k = move |x: f32| x + k;
    let two_types = move |x: f32| ((x as f64) * kd) as f32 + n16 as f32;
    let mut run_map =
        |label: &str,
         f: &dyn Fn(&Arc<CudaStream>, &DeviceBuffer<f32>, &mut DeviceBuffer<f32>) -> Result<(), String>,
         cpu: &dyn Fn(f32) -> f32| {
            report.check(label, || {
                let in_dev = ck(DeviceBuffer::from_host(s, &input), "copy input")?;
                let mut out_dev = ck(DeviceBuffer::from_host(s, &vec![f32::NAN; N]), "poison out")?;
                f(s, &in_dev, &mut out_dev)?;
                ck(s.synchronize(), "synchronize after map")?;
                let want: Vec<f32> = input.iter().map(|x| cpu(*x)).collect();
                compare(label, &ck(out_dev.to_host_vec(s), "copy out back")?, &want, same_bits_f32)
            });
        };
    let cfg = LaunchConfig::for_num_elems(N as u32);
    run_map("closure_times_k", &|s, i, o| ck(m.map::<_>(s, cfg, times_k, i, o), "launch map(times_k)"), &times_k);
    run_map("closure_plus_k_same_fn", &|s, i, o| ck(m.map::<_>(s, cfg, plus_k, i, o), "launch map(plus_k)"), &plus_k);
    run_map(
        "closure_two_capture_types",
        &|s, i, o| ck(m.map::<_>(s, cfg, two_types, i, o), "launch map(two_types)"),
        &two_types,
    );

    report.check("generic_three_instantiations", || {
        let f: Vec<f32> = rng.vec_f32(N);
        let i: Vec<i32> = (0..N).map(|_| (rng.next_u64() % 20_001) as i32 - 10_000).collect();
        // Products stay in range: `*` panics (traps) on overflow in debug builds, on both sides.
        let u: Vec<u64> = (0..N).map(|_| rng.next_u64() >> 24).collect();
        let d: Vec<f64> = (0..N).map(|_| rng.next_f64()).collect();
        let (kf, ki, ku, kd) =
            (rng.next_f32(), (rng.next_u64() % 200) as i32 - 100, rng.next_u64() >> 40, rng.next_f64());
        let mut f_dev = ck(DeviceBuffer::from_host(s, &f), "copy f32")?;
        let mut i_dev = ck(DeviceBuffer::from_host(s, &i), "copy i32")?;
        let mut u_dev = ck(DeviceBuffer::from_host(s, &u), "copy u64")?;
        let mut d_dev = ck(DeviceBuffer::from_host(s, &d), "copy f64")?;
        ck(m.scale::<f32>(s, cfg, kf, &mut f_dev), "launch scale::<f32>")?;
        ck(m.scale::<i32>(s, cfg, ki, &mut i_dev), "launch scale::<i32>")?;
        ck(m.scale::<u64>(s, cfg, ku, &mut u_dev), "launch scale::<u64>")?;
        ck(m.scale::<f64>(s, cfg, kd, &mut d_dev), "launch scale::<f64>")?;
        ck(s.synchronize(), "synchronize after scale")?;
        let wf: Vec<f32> = f.iter().map(|x| x * kf).collect();
        let wi: Vec<i32> = i.iter().map(|x| x * ki).collect();
        let wu: Vec<u64> = u.iter().map(|x| x * ku).collect();
        let wd: Vec<f64> = d.iter().map(|x| x * kd).collect();
        compare("scale::<f32>", &ck(f_dev.to_host_vec(s), "copy f32 back")?, &wf, same_bits_f32)?;
        compare("scale::<i32>", &ck(i_dev.to_host_vec(s), "copy i32 back")?, &wi, |a, b| a == b)?;
        compare("scale::<u64>", &ck(u_dev.to_host_vec(s), "copy u64 back")?, &wu, |a, b| a == b)?;
        compare("scale::<f64>", &ck(d_dev.to_host_vec(s), "copy f64 back")?, &wd, |a, b| a.to_bits() == b.to_bits())
    });

    report.check("byval_struct", || {
        for flag in [true, false] {
            let p = Affine { a: rng.next_f32(), b: rng.next_f64(), n: rng.next_u64() as u8, flag };
            let in_dev = ck(DeviceBuffer::from_host(s, &input), "copy input")?;
            let mut out_dev = ck(DeviceBuffer::from_host(s, &vec![f64::NAN; N]), "poison out")?;
            ck(m.affine(s, cfg, p, &in_dev, &mut out_dev), "launch affine")?;
            ck(s.synchronize(), "synchronize after affine")?;
            let want: Vec<f64> = input
                .iter()
                .map(|x| {
                    let v = *x as f64 + p.b;
                    let v = if p.flag { v * 2.0 } else { v - p.n as f64 };
                    v + p.a as f64
                })
                .collect();
            compare(&format!("affine({p:?})"), &ck(out_dev.to_host_vec(s), "copy out back")?, &want, |a, b| {
                a.to_bits() == b.to_bits()
            })?;
        }
        Ok(())
    });

    report.check("byval_struct_with_option_field", || {
        let ints: Vec<i32> = (0..N).map(|_| rng.next_u64() as i32).collect();
        for offset in [Some(rng.next_u64() as i32), None] {
            let sh = Shift { offset, scale: rng.next_u64() as i32 };
            let in_dev = ck(DeviceBuffer::from_host(s, &ints), "copy input")?;
            let mut out_dev = ck(DeviceBuffer::from_host(s, &vec![POISON_I32; N]), "poison out")?;
            ck(m.shift(s, cfg, sh, &in_dev, &mut out_dev), "launch shift")?;
            ck(s.synchronize(), "synchronize after shift")?;
            let want: Vec<i32> =
                ints.iter().map(|x| x.wrapping_mul(sh.scale).wrapping_add(sh.offset.unwrap_or(-1))).collect();
            compare(&format!("shift({sh:?})"), &ck(out_dev.to_host_vec(s), "copy out back")?, &want, |a, b| a == b)?;
        }
        Ok(())
    });

    report.check("zero_sized_values", || {
        let x = rng.next_u64() as u32;
        let mut out_dev = ck(DeviceBuffer::from_host(s, &vec![0xdead_beef_u32; N]), "poison out")?;
        ck(m.zst(s, cfg, Tag, x, (), &mut out_dev, PhantomData), "launch zst")?;
        ck(s.synchronize(), "synchronize after zst")?;
        let want: Vec<u32> = (0..N).map(|i| x.wrapping_add(i as u32)).collect();
        compare("zst", &ck(out_dev.to_host_vec(s), "copy out back")?, &want, |a, b| a == b)
    });

    report.check("launch_2d_16x16", || {
        let (rows, cols) = (517u32, 300u32);
        let len = (rows * cols) as usize;
        let a = rng.vec_f32(len);
        let b = rng.vec_f32(len);
        let a_dev = ck(DeviceBuffer::from_host(s, &a), "copy a")?;
        let b_dev = ck(DeviceBuffer::from_host(s, &b), "copy b")?;
        let mut c_dev = ck(DeviceBuffer::from_host(s, &vec![f32::NAN; len]), "poison c")?;
        let mut lin_dev = ck(DeviceBuffer::from_host(s, &vec![u32::MAX; len]), "poison lin")?;
        // The chapter's 2D configuration.
        let config = LaunchConfig {
            grid_dim: ((cols + 15) / 16, (rows + 15) / 16, 1),
            block_dim: (16, 16, 1),
            shared_mem_bytes: 0,
        };
        ck(m.add2d(s, config, &a_dev, &b_dev, &mut c_dev, &mut lin_dev, rows, cols), "launch add2d")?;
        ck(s.synchronize(), "synchronize after add2d")?;
        let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        compare("add2d c", &ck(c_dev.to_host_vec(s), "copy c back")?, &want, same_bits_f32)?;
        let want_lin: Vec<u32> = (0..len as u32).collect();
        compare("add2d index_2d", &ck(lin_dev.to_host_vec(s), "copy lin back")?, &want_lin, |a, b| a == b)
    });

    report.check("kernels_named_like_runtime_functions", || {
        let mut out_dev = ck(DeviceBuffer::from_host(s, &vec![0xdead_beef_u32; N]), "poison out")?;
        let x = rng.next_u32();
        ck(m.vprintf(s, cfg, &mut out_dev, x), "launch the kernel named vprintf")?;
        ck(m.say_once(s, LaunchConfig::for_num_elems(1), 7), "launch say_once (gpu_printf!)")?;
        ck(s.synchronize(), "synchronize after vprintf")?;
        let want: Vec<u32> = (0..N as u32).map(|i| x ^ i).collect();
        compare("vprintf", &ck(out_dev.to_host_vec(s), "copy out back")?, &want, |a, b| a == b)?;
        let a = rng.vec_f32(N);
        let a_dev = ck(DeviceBuffer::from_host(s, &a), "copy a")?;
        let mut sin_dev = ck(DeviceBuffer::from_host(s, &vec![f32::NAN; N]), "poison sin")?;
        ck(m.__nv_sinf(s, cfg, &a_dev, &mut sin_dev), "launch the kernel named __nv_sinf")?;
        ck(s.synchronize(), "synchronize after __nv_sinf")?;
        // libdevice's sinf is within 2 ulp of the true value (CUDA's accuracy table).
        let close = |gpu: &f32, cpu: &f32| (gpu.to_bits() as i64 - cpu.to_bits() as i64).abs() <= 2;
        let want: Vec<f32> = a.iter().map(|x| x.sin()).collect();
        compare("__nv_sinf", &ck(sin_dev.to_host_vec(s), "copy sin back")?, &want, close)
    });

    report.check("byval_8kb_parameter", || {
        let mut table = Table { values: [0; 2048] };
        for v in table.values.iter_mut() {
            *v = rng.next_u32();
        }
        let idx: Vec<u32> = (0..N).map(|_| rng.next_u32()).collect();
        let idx_dev = ck(DeviceBuffer::from_host(s, &idx), "copy idx")?;
        let mut out_dev = ck(DeviceBuffer::from_host(s, &vec![0xdead_beef_u32; N]), "poison out")?;
        ck(m.big_param(s, cfg, table, &idx_dev, &mut out_dev), "launch big_param")?;
        ck(s.synchronize(), "synchronize after big_param")?;
        let want: Vec<u32> = idx.iter().map(|i| table.values[(i % 2048) as usize]).collect();
        compare("big_param", &ck(out_dev.to_host_vec(s), "copy out back")?, &want, |a, b| a == b)
    });

    report.finish()
}
