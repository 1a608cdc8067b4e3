//! The host side of the device-compat GPU test: inputs, launches, CPU references, comparisons.

use std::ffi::c_void;

use cuda_core::{CudaStream, DeviceBuffer, LaunchConfig, sys};

use crate::harness::{Lcg, Report, ck, compare};
use crate::kernels;

const N: usize = 256 * 391;

pub fn run() -> ! {
    let mut report = Report::new("device-compat");
    let mut rng = Lcg::from_env_or_clock();
    let (ctx, stream, module) = report.load(kernels::load);
    let s = &*stream;

    report.check("shared_ops", || {
        let x: Vec<u32> = (0..N).map(|_| rng.next_u32()).collect();
        let x_dev = ck(DeviceBuffer::from_host(s, &x), "copy x")?;
        let mut out = ck(DeviceBuffer::from_host(s, &vec![u32::MAX; N]), "poison out")?;
        let mut flags = ck(DeviceBuffer::from_host(s, &vec![u32::MAX; N]), "poison flags")?;
        let config =
            LaunchConfig { grid_dim: ((N / 256) as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 2048 };
        ck(module.shared_ops(s, config, &x_dev, &mut out, &mut flags), "launch shared_ops")?;
        ck(s.synchronize(), "synchronize")?;
        let want: Vec<u32> = (0..N)
            .map(|i| {
                let (base, t) = (i / 256 * 256, i % 256);
                let at = |k: usize| x[base + k % 256];
                at(255 - t)
                    .wrapping_add(at(t + 1) ^ 0xffff)
                    .wrapping_add(at(t + 2).wrapping_mul(3))
                    .wrapping_add(at(t + 3).wrapping_add(1))
            })
            .collect();
        compare("out", &ck(out.to_host_vec(s), "out back")?, &want, PartialEq::eq)?;
        compare("flags (alignment, sizes)", &ck(flags.to_host_vec(s), "flags back")?, &vec![0; N], PartialEq::eq)
    });

    report.check("atomic_cells", || {
        let x: Vec<u32> = (0..N).map(|_| rng.next_u32() % 1_000_000).collect();
        let blocks = ctx.sm_count() * 2;
        let x_dev = ck(DeviceBuffer::from_host(s, &x), "copy x")?;
        let mut counts_init = vec![0u32; 71];
        counts_init[67] = u32::MAX;
        let mut counts = ck(DeviceBuffer::from_host(s, &counts_init), "counts")?;
        let mut longs = ck(DeviceBuffer::from_host(s, &[0u64, 0, 0]), "longs")?;
        let mut fsum = ck(DeviceBuffer::from_host(s, &[0f32]), "fsum")?;
        let mut dsum = ck(DeviceBuffer::from_host(s, &[0f64]), "dsum")?;
        let mut mins = ck(DeviceBuffer::from_host(s, &[0i64]), "mins")?;
        let mut handoff = ck(DeviceBuffer::from_host(s, &vec![u32::MAX; blocks as usize * 256]), "handoff")?;
        let config = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        ck(
            module.atomic_cells(
                s,
                config,
                &x_dev,
                &mut counts,
                &mut longs,
                &mut fsum,
                &mut dsum,
                &mut mins,
                &mut handoff,
            ),
            "launch atomic_cells",
        )?;
        ck(s.synchronize(), "synchronize")?;
        let mut want = counts_init;
        for &v in &x {
            want[(v % 64) as usize] += 1;
            want[64] += v & 1;
            want[65] = want[65].max(v);
            want[66] = 7;
            want[67] &= !(1 << (v % 32));
            want[68] |= 1 << (v % 32);
            want[69] ^= v;
        }
        want[70] = N as u32;
        compare("counts", &ck(counts.to_host_vec(s), "counts back")?, &want, PartialEq::eq)?;
        let max = *x.iter().max().unwrap_or(&0);
        let want_longs = [x.iter().map(|&v| v as u64).sum::<u64>(), max as u64, N as u64];
        compare("longs", &ck(longs.to_host_vec(s), "longs back")?, &want_longs, PartialEq::eq)?;
        let want_f = x.iter().map(|&v| (v % 8) as f32).sum::<f32>();
        compare("fsum", &ck(fsum.to_host_vec(s), "fsum back")?, &[want_f], PartialEq::eq)?;
        let want_d = -x.iter().map(|&v| v as f64).sum::<f64>();
        compare("dsum", &ck(dsum.to_host_vec(s), "dsum back")?, &[want_d], PartialEq::eq)?;
        compare("mins", &ck(mins.to_host_vec(s), "mins back")?, &[-(max as i64)], PartialEq::eq)?;
        let got = ck(handoff.to_host_vec(s), "handoff back")?;
        let want_h: Vec<u32> =
            (0..got.len()).map(|i| if i % 256 == 32 { (i / 256) as u32 + 1000 } else { u32::MAX }).collect();
        compare("handoff (release/acquire)", &got, &want_h, PartialEq::eq)
    });

    report.check("half_cells", || {
        // 1000 adds of 1.0 stay exact in f16 (integers up to 2048 are).
        let mut halves = ck(DeviceBuffer::from_host(s, &[0u16, 0x5640]), "halves (0.0, 100.0)")?;
        let config = LaunchConfig { grid_dim: (4, 1, 1), block_dim: (250, 1, 1), shared_mem_bytes: 0 };
        ck(module.half_cells(s, config, &mut halves), "launch half_cells")?;
        ck(s.synchronize(), "synchronize")?;
        // f16 bits of 1000.0 and 50.0.
        compare("f16 sums", &ck(halves.to_host_vec(s), "halves back")?, &[0x63d0, 0x5240], PartialEq::eq)
    });

    report.check("warp_full", || {
        let x: Vec<f32> = (0..N).map(|_| (rng.next_u32() % 2001) as f32 - 1000.0).collect();
        let keys: Vec<u32> = (0..N)
            .map(|i| {
                let r = rng.next_u32();
                // Every fourth warp has one top bit throughout: match_all then finds them equal.
                if (i / 32) % 4 == 0 { r | 0x8000_0000 } else { r }
            })
            .collect();
        let x_dev = ck(DeviceBuffer::from_host(s, &x), "copy x")?;
        let k_dev = ck(DeviceBuffer::from_host(s, &keys), "copy keys")?;
        let mut sums = ck(DeviceBuffer::from_host(s, &vec![f32::NAN; N]), "poison sums")?;
        let mut bits = ck(DeviceBuffer::from_host(s, &vec![[u32::MAX; 8]; N]), "poison bits")?;
        let config = LaunchConfig { grid_dim: ((N / 256) as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        ck(module.warp_full(s, config, &x_dev, &k_dev, &mut sums, &mut bits), "launch warp_full")?;
        ck(s.synchronize(), "synchronize")?;
        let mut want_sums = vec![0f32; N];
        let mut want_bits = vec![[0u32; 8]; N];
        for w in 0..N / 32 {
            let lanes = w * 32..w * 32 + 32;
            let total: f32 = lanes.clone().map(|i| x[i]).sum();
            let ballot = lanes.clone().filter(|&i| keys[i] & 1 == 1).fold(0u32, |m, i| m | 1 << (i % 32));
            let tops: Vec<u32> = lanes.clone().map(|i| keys[i] >> 31).collect();
            let all_top = if tops.iter().all(|&t| t == tops[0]) { u32::MAX } else { 0 };
            let and = lanes.clone().fold(u32::MAX, |a, i| a & keys[i]);
            let or = lanes.clone().fold(0, |a, i| a | keys[i]);
            let xor = lanes.clone().fold(0, |a, i| a ^ keys[i]);
            for i in lanes {
                let lane = i % 32;
                want_sums[i] = total + x[w * 32] + x[w * 32 + (lane ^ 16)];
                let src = if lane == 31 { i } else { i + 1 };
                let leader_bits = (lane == 0) as u32;
                want_bits[i] = [ballot, all_top, u32::MAX, and, or, xor, src as u32, leader_bits << 8 | 1 << 16];
            }
        }
        compare("sums", &ck(sums.to_host_vec(s), "sums back")?, &want_sums, |a, b| a == b)?;
        compare("bits", &ck(bits.to_host_vec(s), "bits back")?, &want_bits, PartialEq::eq)
    });

    report.check("warp_partial", || {
        let blocks = 777;
        let n = blocks * 48;
        let x: Vec<f32> = (0..n).map(|_| (rng.next_u32() % 2001) as f32 - 1000.0).collect();
        let x_dev = ck(DeviceBuffer::from_host(s, &x), "copy x")?;
        let mut out = ck(DeviceBuffer::from_host(s, &vec![[f32::NAN; 3]; n]), "poison out")?;
        let config = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (48, 1, 1), shared_mem_bytes: 0 };
        ck(module.warp_partial(s, config, &x_dev, &mut out), "launch warp_partial")?;
        ck(s.synchronize(), "synchronize")?;
        let mut want = vec![[0f32; 3]; n];
        for b in 0..blocks {
            for (lo, live) in [(0, 32), (32, 16)] {
                let lanes = b * 48 + lo..b * 48 + lo + live;
                let sum: f32 = lanes.clone().map(|i| x[i]).sum();
                let max = lanes.clone().map(|i| x[i]).fold(f32::NEG_INFINITY, f32::max);
                for i in lanes {
                    want[i] = [sum, max, live as f32];
                }
            }
        }
        compare("out", &ck(out.to_host_vec(s), "out back")?, &want, |a, b| a == b)
    });

    report.check("groups", || {
        let x: Vec<u32> = (0..N).map(|_| rng.next_u32() % 1000).collect();
        let x_dev = ck(DeviceBuffer::from_host(s, &x), "copy x")?;
        let mut out = ck(DeviceBuffer::from_host(s, &vec![[u32::MAX; 8]; N]), "poison out")?;
        let mut fout = ck(DeviceBuffer::from_host(s, &vec![[f32::NAN; 2]; N]), "poison fout")?;
        let config = LaunchConfig { grid_dim: ((N / 256) as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        ck(module.groups(s, config, &x_dev, &mut out, &mut fout), "launch groups")?;
        ck(s.synchronize(), "synchronize")?;
        let mut want = vec![[0u32; 8]; N];
        let mut fwant = vec![[0f32; 2]; N];
        for b in 0..N / 256 {
            let block = b * 256..b * 256 + 256;
            let bmax = block.clone().map(|i| x[i]).max().unwrap_or(0);
            let fsum: f32 = block.clone().map(|i| (x[i] % 16) as f32).sum();
            let imin = block.clone().map(|i| x[i] as i32 - 500).min().unwrap_or(0);
            let mut prefix = 0u32;
            for i in block {
                let (t16, t8, w) = (i / 16 * 16, i / 8 * 8, i / 32 * 32);
                let sum16: u32 = (t16..t16 + 16).map(|j| x[j]).sum();
                let scan8: u32 = (t8..=i).map(|j| x[j]).sum();
                let ballot16 = (t16..t16 + 16).filter(|&j| x[j] & 1 == 1).fold(0u32, |m, j| m | 1 << (j - t16));
                prefix += x[i];
                let odd: Vec<usize> = (w..w + 32).filter(|&j| x[j] & 1 == 1).collect();
                let coalesced = if x[i] & 1 == 1 {
                    odd.iter().filter(|&&j| j < i).count() as u32 | (odd.len() as u32) << 8
                } else {
                    0
                };
                // `shfl_xor(v, 16)` in a 16-lane tile: the source is outside the tile (above or
                // below it), so every thread keeps its own value.
                let xor16 = x[i];
                want[i] = [sum16, scan8, ballot16, x[t16 + 3], xor16, bmax, prefix, coalesced];
                fwant[i] = [fsum, imin as f32];
            }
        }
        compare("out", &ck(out.to_host_vec(s), "out back")?, &want, PartialEq::eq)?;
        compare("fout", &ck(fout.to_host_vec(s), "fout back")?, &fwant, |a, b| a == b)
    });

    report.check("grid_sync", || {
        let blocks = ctx.sm_count();
        let mut markers = ck(DeviceBuffer::from_host(s, &vec![0u32; blocks as usize]), "markers")?;
        let mut out = ck(DeviceBuffer::from_host(s, &vec![u32::MAX; 2 * blocks as usize]), "poison out")?;
        let f = ck(module.kernels().function_named("grid_rounds"), "find grid_rounds")?;
        launch_cooperative(&f, s, blocks, 128, &mut [&mut markers, &mut out])?;
        ck(s.synchronize(), "synchronize after grid_rounds")?;
        let total = blocks * (blocks + 1) / 2;
        let want: Vec<u32> = (0..2 * blocks).map(|i| if i % 2 == 0 { total } else { 2 * total }).collect();
        compare("sums after grid::sync", &ck(out.to_host_vec(s), "out back")?, &want, PartialEq::eq)
    });

    report.check("index_spaces", || {
        let (rows, cols) = (100, 64);
        let x: Vec<f32> = (0..rows * cols).map(|_| (rng.next_u32() % 1000) as f32).collect();
        let x_dev = ck(DeviceBuffer::from_host(s, &x), "copy x")?;
        let mut out = ck(DeviceBuffer::from_host(s, &vec![f32::NAN; rows * cols]), "poison out")?;
        // 80 columns of threads: the 16 past the matrix must get no index.
        let config = LaunchConfig { grid_dim: (5, 25, 1), block_dim: (16, 4, 1), shared_mem_bytes: 0 };
        ck(module.spaces(s, config, &x_dev, &mut out), "launch spaces")?;
        ck(s.synchronize(), "synchronize")?;
        let want: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
        compare("index_2d::<64>", &ck(out.to_host_vec(s), "out back")?, &want, |a, b| a == b)?;

        let blocks = 333;
        let n = blocks * 48;
        let x: Vec<f32> = (0..n).map(|_| (rng.next_u32() % 1000) as f32).collect();
        let x_dev = ck(DeviceBuffer::from_host(s, &x), "copy x")?;
        let mut sums = ck(DeviceBuffer::from_host(s, &vec![f32::NAN; blocks * 2]), "poison sums")?;
        let config = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (48, 1, 1), shared_mem_bytes: 0 };
        ck(module.warp_sums(s, config, &x_dev, &mut sums), "launch warp_sums")?;
        ck(s.synchronize(), "synchronize")?;
        let want: Vec<f32> = (0..blocks * 2)
            .map(|w| {
                let (b, half) = (w / 2, w % 2);
                let lanes = if half == 0 { b * 48..b * 48 + 32 } else { b * 48 + 32..b * 48 + 48 };
                lanes.map(|i| x[i]).sum()
            })
            .collect();
        compare("warp_index sums", &ck(sums.to_host_vec(s), "sums back")?, &want, |a, b| a == b)
    });

    report.check("rounding_modes", || {
        let n = 100_000;
        // Operands of very different size, so that most sums are inexact.
        let a: Vec<f32> = (0..n).map(|_| rng.next_f32() * 1e3).collect();
        let b: Vec<f32> = (0..n).map(|_| rng.next_f32() * 1e-3).collect();
        let a_dev = ck(DeviceBuffer::from_host(s, &a), "copy a")?;
        let b_dev = ck(DeviceBuffer::from_host(s, &b), "copy b")?;
        let mut out = ck(DeviceBuffer::from_host(s, &vec![[f32::NAN; 6]; n]), "poison out")?;
        ck(module.rounding(s, LaunchConfig::for_num_elems(n as u32), &a_dev, &b_dev, &mut out), "launch rounding")?;
        ck(s.synchronize(), "synchronize")?;
        let got = ck(out.to_host_vec(s), "out back")?;
        for i in 0..n {
            let [rn, rm, rp, rz, sq, rcp] = got[i];
            let exact = a[i] as f64 + b[i] as f64;
            let toward_zero = if exact >= 0.0 { rm } else { rp };
            let ok = rn == a[i] + b[i]
                && (rm as f64) <= exact
                && exact <= rp as f64
                && rp.next_down() <= rm
                && rz == toward_zero
                && sq == a[i].abs().sqrt()
                && rcp == 1.0 / a[i];
            if !ok {
                return Err(format!(
                    "element {i}: a {} b {}: gpu [rn, rm, rp, rz, sqrt, rcp] {:?}",
                    a[i], b[i], got[i]
                ));
            }
        }
        Ok(())
    });

    report.check("dot_products", || {
        let n = 64 * 300;
        let a: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let b: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let a_dev = ck(DeviceBuffer::from_host(s, &a), "copy a")?;
        let b_dev = ck(DeviceBuffer::from_host(s, &b), "copy b")?;
        let mut out = ck(DeviceBuffer::from_host(s, &vec![[u32::MAX; 4]; n]), "poison out")?;
        let config = LaunchConfig { grid_dim: (4, 300 / 4, 1), block_dim: (16, 4, 1), shared_mem_bytes: 0 };
        ck(module.misc(s, config, &a_dev, &b_dev, &mut out), "launch misc")?;
        ck(s.synchronize(), "synchronize")?;
        let want: Vec<[u32; 4]> = (0..n).map(|i| dot_products(a[i], b[i], i as u32)).collect();
        compare("dp4a/dp2a", &ck(out.to_host_vec(s), "out back")?, &want, PartialEq::eq)
    });

    report.finish()
}

/// `[dp4a.s32, dp4a.u32, dp2a.lo.s32, dp2a.lo.u32]` of `a`, `b` with accumulator `c`.
fn dot_products(a: u32, b: u32, c: u32) -> [u32; 4] {
    let (ab, bb) = (a.to_le_bytes(), b.to_le_bytes());
    let s4 = (0..4).fold(c as i32, |acc, k| acc.wrapping_add(ab[k] as i8 as i32 * bb[k] as i8 as i32));
    let u4 = (0..4).fold(c, |acc, k| acc.wrapping_add(ab[k] as u32 * bb[k] as u32));
    let halves = [a as u16, (a >> 16) as u16];
    let s2 = (0..2).fold(c as i32, |acc, k| acc.wrapping_add(halves[k] as i16 as i32 * bb[k] as i8 as i32));
    let u2 = (0..2).fold(c, |acc, k| acc.wrapping_add(halves[k] as u32 * bb[k] as u32));
    [s4 as u32, u4, s2 as u32, u2]
}

/// A cooperative launch (`cuLaunchKernelEx` with the cooperative attribute) of a kernel whose
/// parameters are all `DisjointSlice`s: `grid` blocks of `block` threads.
fn launch_cooperative(
    f: &cuda_core::Function,
    stream: &CudaStream,
    grid: u32,
    block: u32,
    slices: &mut [&mut DeviceBuffer<u32>],
) -> Result<(), String> {
    let mut words: Vec<u64> = slices.iter().flat_map(|b| [b.as_device_ptr(), b.len() as u64]).collect();
    let mut params: Vec<*mut c_void> = words.iter_mut().map(|w| (w as *mut u64).cast()).collect();
    // SAFETY: an all-zero attribute is valid plain data; we set the fields we use.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr.value.cooperative = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: grid,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: block,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: 0,
        hStream: stream.raw(),
        attrs: &mut attr,
        numAttrs: 1,
    };
    ck(stream.context().bind_to_thread(), "bind the context")?;
    // SAFETY: `params` holds (pointer, length) per DisjointSlice parameter, as the kernel ABI says;
    // the buffers outlive the launch (the caller synchronizes before dropping them).
    let r = unsafe { sys::cuLaunchKernelEx(&config, f.raw(), params.as_mut_ptr(), std::ptr::null_mut()) };
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("cuLaunchKernelEx (cooperative launch of grid_rounds) returned {r:?}"))
    }
}
