//! Golden PTX checks of the tensor-core API (issue 14, no GPU needed): one crate built with
//! `cargo oxide build --release --arch sm_90a` — `mma.sync` for bf16/f16/tf32, `ldmatrix` and
//! `stmatrix` (x1/x2/x4, `.trans`), mbarriers, `elect.sync`, `setmaxnreg`, `wgmma.mma_async` with
//! its fence/commit/wait and every form (B N-major, A from registers, fp8), TMA tile copies (2D, 3D, cluster multicast, grid-constant maps) and the
//! plain bulk copy onto an mbarrier — each PTX accepted by `ptxas`, and for `examples/gemm-mma`
//! (sm_80 and sm_90), `examples/gemm-wgmma-tma` and `examples/attention` (sm_90a) the instructions
//! their algorithms are made of.
use std::sync::OnceLock;

use oxide_contract::arch::Arch;
use oxide_contract::naming::files;
use oxide_tests::ptx::{Built, entry};
use oxide_tests::*;

const ARCH: &str = "sm_90a";

const TENSOR: &str = r#"
#![feature(f16)]
use cuda_device::half::bf16;
use cuda_device::mbarrier::{self, MBarrier, Phase};
use cuda_device::mma::{self, Accumulator, FragA, FragB, Tf32};
use cuda_device::tma::{self, TensorMap};
use cuda_device::wgmma;
use cuda_device::{cluster, cluster_launch, cuda_module, kernel, sync_threads, thread, SharedMemory};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn mma_kinds(a: &[u32], b: &[u32], out: &mut [f32]) {
        let lane = thread::threadIdx_x();
        let l = lane as usize;
        let fa = FragA::<bf16>::from_regs([a[l], a[l + 32], a[l + 64], a[l + 96]]);
        let fb = FragB::<bf16>::from_regs([b[l], b[l + 32]]);
        let mut acc = Accumulator::ZERO;
        unsafe { mma::mma_sync(&fa, &fb, &mut acc) };
        let ha = FragA::<f16>::from_regs(fa.regs);
        let hb = FragB::<f16>::from_regs(fb.regs);
        unsafe { mma::mma_sync(&ha, &hb, &mut acc) };
        let ta = FragA::<Tf32>::from_regs(fa.regs);
        let tb = FragB::<Tf32>::from_regs(fb.regs);
        unsafe { mma::mma_sync(&ta, &tb, &mut acc) };
        for i in 0..4 {
            out[l * 4 + i] = acc.d[i];
        }
    }

    #[kernel]
    pub fn ld_st_matrix(src: &[u32], out: &mut [u32]) {
        static T: SharedMemory<u32, 1024, 16> = SharedMemory::UNINIT;
        let l = thread::threadIdx_x() as usize;
        let mut i = l;
        while i < 1024 {
            unsafe { T.write(i, src[i]) };
            i += 32;
        }
        sync_threads();
        let row = unsafe { T.as_mut_ptr().add((l % 32) * 4) as *mut u8 };
        let x1 = unsafe { mma::ldmatrix_x1(row) };
        let x2 = unsafe { mma::ldmatrix_x2(row) };
        let x4 = unsafe { mma::ldmatrix_x4(row) };
        let t1 = unsafe { mma::ldmatrix_x1_trans(row) };
        let t2 = unsafe { mma::ldmatrix_x2_trans(row) };
        let t4 = unsafe { mma::ldmatrix_x4_trans(row) };
        sync_threads();
        let dst = unsafe { T.as_mut_ptr().add(512 + (l % 32) * 4) as *mut u8 };
        unsafe { mma::stmatrix_x4(dst, x4) };
        unsafe { mma::stmatrix_x2_trans(dst, x2) };
        unsafe { mma::stmatrix_x1(dst, t1) };
        sync_threads();
        out[l] = x1[0] ^ x2[1] ^ t2[0] ^ t4[3] ^ unsafe { T.read(512 + l) };
    }

    #[kernel]
    pub fn barriers(out: &mut [u32]) {
        static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
        let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
        if thread::threadIdx_x() == 0 {
            unsafe { bar.init(thread::blockDim_x()) };
            mbarrier::fence_init();
        }
        sync_threads();
        let mut phase = Phase::new(bar);
        bar.arrive();
        phase.wait();
        bar.arrive_expect_tx(0);
        phase.wait();
        mbarrier::fence_proxy_async();
        let elected = unsafe { mbarrier::elect_one() };
        let l = thread::threadIdx_x() as usize;
        out[l] = elected as u32 + phase.parity();
    }

    #[kernel]
    pub fn regs_and_wgmma(a_map: &[TensorMap], out: &mut [f32]) {
        static A: SharedMemory<bf16, { 64 * 64 }, 1024> = SharedMemory::UNINIT;
        static B: SharedMemory<bf16, { 64 * 64 }, 1024> = SharedMemory::UNINIT;
        static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x();
        if t >= 128 {
            unsafe { mbarrier::setmaxnreg_dec::<40>() };
            return;
        }
        unsafe { mbarrier::setmaxnreg_inc::<232>() };
        let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
        let map = a_map.as_ptr();
        if t == 0 {
            unsafe { bar.init(1) };
            mbarrier::fence_init();
            unsafe { tma::prefetch(map) };
        }
        sync_threads();
        if t == 0 {
            bar.arrive_expect_tx(2 * 64 * 64 * 2);
            unsafe {
                tma::load_2d(A.as_mut_ptr().cast(), map, 0, 0, bar);
                tma::load_2d(B.as_mut_ptr().cast(), map, 0, 64, bar);
            }
        }
        Phase::new(bar).wait();
        let mut acc = wgmma::Accumulator::<32>::ZERO;
        unsafe {
            wgmma::fence();
            for k in 0..4u32 {
                let da = wgmma::descriptor_k_major_128b(A.as_mut_ptr(), k * 16);
                let db = wgmma::descriptor_k_major_128b(B.as_mut_ptr(), k * 16);
                wgmma::mma_bf16(&mut acc, da, db, k > 0);
            }
            wgmma::commit_group();
            wgmma::wait_group::<0, 32>(&mut acc);
        }
        let mut i = 0;
        while i < 32 {
            let (r, c) = wgmma::Accumulator::<32>::coord(t, i);
            unsafe { A.write(r * 64 + c, bf16::from_f32(acc.d[i])) };
            i += 1;
        }
        mbarrier::fence_proxy_async();
        sync_threads();
        if t == 0 {
            unsafe { tma::store_2d(map, 0, 0, A.as_mut_ptr().cast()) };
            tma::commit_group();
            tma::wait_group_read();
            tma::wait_group();
        }
        out[t as usize] = acc.d[0];
    }

    /// The other wgmma forms: B N-major (bf16 m64n128, f16 m64n64), A from registers (bf16 from
    /// an accumulator's columns, f16 from loaded values; B K- and N-major), fp8 (e4m3 m64n128k32,
    /// e5m2 m64n64k32), and the accumulator's `scale` and `fill`.
    #[kernel]
    pub fn wgmma_forms(vals: &[u32], out: &mut [f32]) {
        static A: SharedMemory<bf16, { 64 * 64 }, 1024> = SharedMemory::UNINIT;
        static B: SharedMemory<bf16, { 64 * 128 }, 1024> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x();
        let mut s = wgmma::Accumulator::<32>::ZERO;
        let mut o = wgmma::Accumulator::<64>::ZERO;
        let mut q = wgmma::Accumulator::<32>::ZERO;
        q.fill(vals[0] as f32);
        unsafe {
            wgmma::fence();
            let da = wgmma::descriptor_k_major_128b(A.as_mut_ptr(), 16);
            let dmn = wgmma::descriptor_mn_major_128b(B.as_mut_ptr(), 16, 64);
            wgmma::mma_bf16_mn_b(&mut o, da, dmn, false);
            wgmma::mma_f16_mn_b(&mut s, da, dmn, false);
            wgmma::commit_group();
            wgmma::wait_group::<0, 32>(&mut s);
        }
        s.scale(0.125);
        let p = wgmma::FragA::<bf16>::from_accumulator(&s, 1);
        let h = wgmma::FragA::<f16>::from_fn(t, |r, k| f16::from_bits(vals[r * 16 + k] as u16));
        unsafe {
            wgmma::fence();
            let dk = wgmma::descriptor_k_major_128b(B.as_mut_ptr(), 0);
            let dmn = wgmma::descriptor_mn_major_128b(B.as_mut_ptr(), 0, 64);
            wgmma::mma_rs(&mut q, &p, dk, true);
            wgmma::mma_rs_mn_b(&mut o, &p, dmn, true);
            wgmma::mma_rs(&mut q, &h, dk, true);
            let d8 = wgmma::descriptor_k_major_128b_8bit(A.as_mut_ptr(), 32);
            wgmma::mma_e4m3(&mut o, d8, d8, true);
            wgmma::mma_e5m2(&mut q, d8, d8, true);
            wgmma::commit_group();
            wgmma::wait_group::<0, 64>(&mut o);
            wgmma::wait_group::<0, 32>(&mut q);
        }
        out[t as usize] = o.d[0] + o.d[63] + q.d[5] + s.d[3];
    }

    /// A 3D box through a grid-constant map: loaded, then stored one box further along x.
    #[kernel]
    pub fn tma_3d(map: TensorMap, out: &mut [u32]) {
        static T: SharedMemory<f32, { 4 * 8 * 16 }, 128> = SharedMemory::UNINIT;
        static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x();
        let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
        if t == 0 {
            unsafe { bar.init(1) };
            mbarrier::fence_init();
            unsafe { tma::prefetch(&map) };
        }
        sync_threads();
        if t == 0 {
            bar.arrive_expect_tx(4 * 8 * 16 * 4);
            unsafe { tma::load_3d(T.as_mut_ptr().cast(), &map, 0, 8, 2, bar) };
        }
        Phase::new(bar).wait();
        mbarrier::fence_proxy_async();
        sync_threads();
        if t == 0 {
            unsafe { tma::store_3d(&map, 16, 0, 0, T.as_mut_ptr().cast()) };
            tma::commit_group();
            tma::wait_group();
        }
        out[t as usize] = unsafe { T.read(t as usize) }.to_bits();
    }

    /// Block 0 of each 2-block cluster multicasts a 2D and a 3D tile to both blocks.
    #[kernel]
    #[cluster_launch(2, 1, 1)]
    pub fn tma_multicast(map2: TensorMap, map3: TensorMap, out: &mut [u32]) {
        static T: SharedMemory<f32, { 2 * 8 * 16 }, 128> = SharedMemory::UNINIT;
        static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x();
        let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
        if t == 0 {
            unsafe { bar.init(1) };
            mbarrier::fence_init();
            bar.arrive_expect_tx(2 * 8 * 16 * 4);
        }
        cluster::sync();
        if t == 0 && cluster::block_rank() == 0 {
            unsafe {
                tma::load_2d_multicast(T.as_mut_ptr().cast(), &map2, 0, 0, bar, 0b11);
                tma::load_3d_multicast(T.as_mut_ptr().add(8 * 16).cast(), &map3, 0, 0, 1, bar, 0b11);
            }
        }
        Phase::new(bar).wait();
        out[t as usize] = unsafe { T.read(t as usize) }.to_bits();
        cluster::sync();
    }

    /// A bulk copy (no tensor map) onto an mbarrier, into a tile whose alignment is a const
    /// expression (as the guide's TMA chapter writes it), read back through the swizzle.
    #[kernel]
    pub fn bulk_copy(x: &[f32], out: &mut [f32]) {
        static T: SharedMemory<f32, 256, { tma::TmaSwizzle::B128.alignment() }> = SharedMemory::UNINIT;
        static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
        if t == 0 {
            unsafe { bar.init(1) };
            mbarrier::fence_init();
        }
        sync_threads();
        if t == 0 {
            bar.arrive_expect_tx(1024);
            unsafe { tma::bulk_load(T.as_mut_ptr(), &x[..256], bar) };
        }
        Phase::new(bar).wait();
        out[t] = unsafe { T.read(tma::TmaSwizzle::B128.apply(t * 4) / 4) };
    }

    /// Maps in an array by value: the whole array stays in parameter memory.
    #[kernel]
    pub fn tma_map_array(maps: [TensorMap; 2], out: &mut [u32]) {
        static T: SharedMemory<f32, { 8 * 16 }, 128> = SharedMemory::UNINIT;
        static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
        let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
        if thread::threadIdx_x() == 0 {
            unsafe { bar.init(1) };
            mbarrier::fence_init();
            bar.arrive_expect_tx(8 * 16 * 4);
            unsafe { tma::load_2d(T.as_mut_ptr().cast(), &maps[1], 0, 0, bar) };
        }
        Phase::new(bar).wait();
        out[0] = unsafe { T.read(0) }.to_bits();
    }
}

fn main() {}
"#;

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| Built::release("e2e-tensor-codegen", TENSOR, &[ARCH]))
}

fn ptx() -> String {
    built().ptx(ARCH)
}

/// The PTX of an example crate built with `--release`.
fn example_ptx_path(crate_name: &str, arch: &str) -> std::path::PathBuf {
    device_dir("release").join(crate_name).join(files::ptx(crate_name, Arch::parse(arch).expect("known arch")))
}

fn assert_has(ptx: &str, kernel: &str, needles: &[&str]) {
    let body = entry(ptx, kernel);
    for needle in needles {
        assert!(body.contains(needle), "`.entry {kernel}` has no `{needle}`:\n{body}");
    }
}

fn ptxas_ok(path: &std::path::Path, arch: &str) {
    let cubin = std::env::temp_dir().join(format!("tensor-check-{}-{arch}.cubin", std::process::id()));
    let out = std::process::Command::new(ptxas())
        .arg(format!("-arch={arch}"))
        .arg(path)
        .arg("-o")
        .arg(&cubin)
        .output()
        .expect("run ptxas");
    assert!(out.status.success(), "ptxas -arch={arch} {} failed:\n{}", path.display(), stderr(&out));
}

#[test]
fn sm_90a_ptx_targets_sm_90a_and_passes_ptxas() {
    let text = ptx();
    assert!(text.contains(".target sm_90a"), "no `.target sm_90a`:\n{}", &text[..text.len().min(400)]);
    built().assert_ptxas();
    // The bundle carries the arch-specific cubin.
    let cubin = built().cubin_path(ARCH);
    assert!(cubin.exists(), "no {}", cubin.display());
}

#[test]
fn mma_sync_for_each_element_type() {
    assert_has(
        &ptx(),
        "mma_kinds",
        &[
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
        ],
    );
    // Fragments stay in registers.
    assert!(!entry(&ptx(), "mma_kinds").contains(".local"), "fragments spilled to local memory");
}

#[test]
fn ldmatrix_and_stmatrix_shapes() {
    assert_has(
        &ptx(),
        "ld_st_matrix",
        &[
            "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
            "stmatrix.sync.aligned.m8n8.x4.shared.b16",
            "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
            "stmatrix.sync.aligned.m8n8.x1.shared.b16",
        ],
    );
}

#[test]
fn mbarrier_fences_and_elect() {
    assert_has(
        &ptx(),
        "barriers",
        &[
            "mbarrier.init.shared.b64",
            "fence.mbarrier_init.release.cluster",
            "mbarrier.arrive.shared.b64",
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            "mbarrier.try_wait.parity.shared::cta.b64",
            "fence.proxy.async.shared::cta",
            "elect.sync",
        ],
    );
}

#[test]
fn wgmma_tma_and_setmaxnreg() {
    let text = ptx();
    assert_has(
        &text,
        "regs_and_wgmma",
        &[
            "setmaxnreg.dec.sync.aligned.u32 40",
            "setmaxnreg.inc.sync.aligned.u32 232",
            "prefetch.tensormap",
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
            "wgmma.fence.sync.aligned",
            "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
            "wgmma.commit_group.sync.aligned",
            "wgmma.wait_group.sync.aligned 0",
            "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group",
            "cp.async.bulk.commit_group",
            "cp.async.bulk.wait_group.read 0",
        ],
    );
    assert_eq!(entry(&text, "regs_and_wgmma").matches("wgmma.mma_async").count(), 4, "one wgmma per k step");
}

/// The `wgmma.mma_async` lines of `.entry kernel`, as `ptxas` will read them.
fn wgmma_lines(ptx: &str, kernel: &str) -> Vec<String> {
    entry(ptx, kernel)
        .lines()
        .filter_map(|l| l.find("wgmma.mma_async").map(|at| l[at..].trim_end().to_string()))
        .collect()
}

/// Each form of `wgmma.mma_async` with its operands: the accumulators `{%r…}` (LLVM keeps f32
/// in `%r` registers too), A as a descriptor `%rd…` or as four registers `{%r…}`, B's
/// descriptor, then scale-d, the two scales and the transpose immediates (A's only with A a
/// descriptor; none for fp8).
#[test]
fn wgmma_forms_b_n_major_a_in_registers_and_fp8() {
    let text = ptx();
    let lines = wgmma_lines(&text, "wgmma_forms");
    let has = |what: &str, shape: &str, a_regs: bool, tail: &str| {
        let found = lines.iter().any(|l| {
            let Some(rest) = l.strip_prefix(&format!("wgmma.mma_async.sync.aligned.{shape} {{%r")) else {
                return false;
            };
            let a = rest.split_once("}, ").map(|(_, a)| a).unwrap_or("");
            a.starts_with(if a_regs { "{%r" } else { "%rd" }) && l.ends_with(tail)
        });
        assert!(found, "no {what} (`{shape}`, A in registers: {a_regs}, ending `{tail}`) in:\n{}", lines.join("\n"));
    };
    has("SS bf16, B N-major", "m64n128k16.f32.bf16.bf16", false, ", p, 1, 1, 0, 1; }");
    has("SS f16, B N-major", "m64n64k16.f32.f16.f16", false, ", p, 1, 1, 0, 1; }");
    has("RS bf16, B K-major", "m64n64k16.f32.bf16.bf16", true, ", p, 1, 1, 0; }");
    has("RS bf16, B N-major", "m64n128k16.f32.bf16.bf16", true, ", p, 1, 1, 1; }");
    has("RS f16, B K-major", "m64n64k16.f32.f16.f16", true, ", p, 1, 1, 0; }");
    has("SS e4m3", "m64n128k32.f32.e4m3.e4m3", false, ", p, 1, 1; }");
    has("SS e5m2", "m64n64k32.f32.e5m2.e5m2", false, ", p, 1, 1; }");
    assert_eq!(lines.len(), 7, "one line per call:\n{}", lines.join("\n"));
    // The RS form's A operand is exactly four 32-bit registers.
    for l in lines.iter().filter(|l| l.contains("}, {%r")) {
        let a = l.split("}, {").nth(1).and_then(|a| a.split('}').next()).unwrap_or("");
        assert_eq!(a.split(", ").filter(|r| r.starts_with("%r") && !r.starts_with("%rd")).count(), 4, "{l}");
    }
    let body = entry(&text, "wgmma_forms");
    assert!(!body.contains(".local"), "accumulators or fragments spilled to local memory:\n{body}");
    // ptxas accepts every form (the whole crate, this kernel included).
    built().assert_ptxas();
}

/// `examples/gemm-mma`: the tensor-core GEMM is made of `mma.sync`, `ldmatrix` and `cp.async`,
/// with its fragments and accumulators in registers, for sm_80 and sm_90.
#[test]
fn gemm_mma_example_uses_the_tensor_cores() {
    let dir = checkout_root().join("examples/gemm-mma");
    let out = cargo_oxide(&dir, &["build", "--release", "--arch", "sm_80,sm_90"]);
    assert_success(&out, "cargo oxide build --release examples/gemm-mma");
    for arch in ["sm_80", "sm_90"] {
        let path = example_ptx_path("gemm_mma", arch);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let body = entry(&text, "gemm_mma");
        // 2 k16 steps × 4×4 warp tiles; 2 × (4 A + 2 B) ldmatrix.x4; 4 cp.async per stage load:
        // in each copy of the kernel (`pipeline/uniform_bounds.rs`: the copy without checks,
        // whose blocks `llc` names `%oxide.fast.*`, and the checked one).
        let (checked, fast) = ptx::in_kernel_copies(body);
        for (copy, code) in [("checked", &checked), ("fast", &fast)] {
            if copy == "fast" && code.is_empty() {
                continue;
            }
            let mma = code.matches("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32").count();
            assert_eq!(mma, 32, "{arch} {copy}");
            assert_eq!(code.matches("ldmatrix.sync.aligned.m8n8.x4.shared.b16").count(), 12, "{arch} {copy}");
        }
        assert!(body.contains("cp.async.cg.shared.global"), "{arch}: no cp.async");
        assert!(!body.contains(".local"), "{arch}: gemm_mma spills to local memory");
        ptxas_ok(&path, arch);
    }
}

/// `examples/gemm-wgmma-tma` (sm_90a): TMA loads onto mbarriers, wgmma on shared-memory
/// descriptors, register reallocation; its accumulators stay in registers.
#[test]
fn gemm_wgmma_tma_example_uses_tma_and_wgmma() {
    let dir = checkout_root().join("examples/gemm-wgmma-tma");
    let out = cargo_oxide(&dir, &["build", "--release", "--arch", "sm_90a"]);
    assert_success(&out, "cargo oxide build --release --arch sm_90a examples/gemm-wgmma-tma");
    let path = example_ptx_path("gemm_wgmma_tma", "sm_90a");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let body = entry(&text, "gemm_wgmma");
    for needle in [
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        "mbarrier.arrive.expect_tx.shared::cta.b64",
        "mbarrier.try_wait.parity.shared::cta.b64",
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
        "wgmma.wait_group.sync.aligned 0",
        "setmaxnreg.inc.sync.aligned.u32 232",
    ] {
        assert!(body.contains(needle), "`.entry gemm_wgmma` has no `{needle}`");
    }
    assert!(!body.contains(".local"), "gemm_wgmma spills to local memory");
    ptxas_ok(&path, "sm_90a");
}

/// TMA in 3D, and a `TensorMap` by value: a 64-byte aligned 128-byte `.param` read in place
/// (`cvta.param`, as nvcc does for `const __grid_constant__ CUtensorMap`), never copied to local
/// memory, whose address the copies take.
#[test]
fn tma_3d_through_a_grid_constant_map() {
    let text = ptx();
    assert_has(
        &text,
        "tma_3d",
        &[
            ".param .align 64 .b8 tma_3d_param_0[128]",
            "cvta.param.u64",
            "prefetch.tensormap",
            "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
            "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group",
        ],
    );
    let body = entry(&text, "tma_3d");
    assert!(!body.contains(".local"), "the map was copied to local memory:\n{body}");
    assert!(!body.contains("ld.param.u64"), "the map was read into registers, not used in place:\n{body}");
}

/// Multicast loads to the blocks of a cluster, with their CTA mask, from two grid-constant maps.
#[test]
fn tma_multicast_in_a_cluster() {
    let text = ptx();
    assert_has(
        &text,
        "tma_multicast",
        &[
            ".param .align 64 .b8 tma_multicast_param_0[128]",
            ".param .align 64 .b8 tma_multicast_param_1[128]",
            ".reqnctapercluster 2, 1, 1",
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster",
            "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster",
        ],
    );
    let body = entry(&text, "tma_multicast");
    assert_eq!(body.matches("cvta.param.u64").count(), 2, "both maps used in place:\n{body}");
    assert!(!body.contains(".local"), "a map was copied to local memory:\n{body}");
}

/// `tma::bulk_load`: one `cp.async.bulk` onto the mbarrier; and a
/// `SharedMemory` whose `ALIGN` is a const expression gets that alignment (it used to be dropped
/// silently when the expression was not a literal).
#[test]
fn bulk_copy_into_a_tile_aligned_by_a_const_expression() {
    let text = ptx();
    assert_has(
        &text,
        "bulk_copy",
        &[
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
            "mbarrier.try_wait.parity.shared::cta.b64",
        ],
    );
    let decl = text.lines().map(str::trim).find(|l| l.starts_with(".shared") && l.contains("bulk_copy1T["));
    assert!(
        decl.is_some_and(|d| d.starts_with(".shared .align 1024 .b8") && d.ends_with("[1024];")),
        "the tile is not 1024-byte aligned: {decl:?}"
    );
}

/// A value holding maps (here an array) is grid-constant as a whole: one 256-byte `.param`, the
/// second map's address an offset into it.
#[test]
fn tma_maps_in_an_array_by_value() {
    let text = ptx();
    assert_has(&text, "tma_map_array", &[".param .align 64 .b8 tma_map_array_param_0[256]", "cvta.param.u64"]);
    let body = entry(&text, "tma_map_array");
    assert!(!body.contains(".local"), "the maps were copied to local memory:\n{body}");
}

/// `examples/attention` (sm_90a): Q, K and V by TMA onto mbarriers; S = Q·Kᵀ by wgmma from shared
/// memory, O += P·V by the RS form (P in registers, `{%r, %r, %r, %r}`, V N-major: trans-b 1)
/// with `wait_group 1` overlap; the softmax's `ex2`, quad shuffles and bf16 packing; producer and
/// consumer register counts; the ping-pong kernels' named barriers. No local memory, and ptxas
/// serialises none of the wgmmas (its C7513/C7519 notes: a wait or a fence on one branch only, or
/// a spin loop between two wgmmas, makes it wait after every one).
#[test]
fn attention_example_is_tma_wgmma_rs_and_mbarriers() {
    let dir = checkout_root().join("examples/attention");
    let out = cargo_oxide(&dir, &["build", "--release", "--arch", "sm_90a"]);
    assert_success(&out, "cargo oxide build --release --arch sm_90a examples/attention");
    let path = example_ptx_path("attention", "sm_90a");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    for (kernel, pv_shape) in [
        ("attention_d64", "m64n64k16"),
        ("attention_d128", "m64n128k16"),
        ("attention_d64_pp", "m64n64k16"),
        ("attention_d128_pp", "m64n128k16"),
    ] {
        let body = entry(&text, kernel);
        for needle in [
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            "mbarrier.try_wait.parity.shared::cta.b64",
            "mbarrier.arrive.shared.b64",
            "prefetch.tensormap",
            "wgmma.fence.sync.aligned",
            "wgmma.commit_group.sync.aligned",
            "wgmma.wait_group.sync.aligned 1",
            "wgmma.wait_group.sync.aligned 0",
            "ex2.approx.ftz.f32",
            "shfl.sync.bfly.b32",
            "cvt.rn.bf16x2.f32",
            "setmaxnreg.dec.sync.aligned.u32 40",
            "setmaxnreg.inc.sync.aligned.u32 232",
        ] {
            assert!(body.contains(needle), "`.entry {kernel}` has no `{needle}`");
        }
        let wgmmas: Vec<&str> = body.lines().filter(|l| l.contains("wgmma.mma_async")).collect();
        // S = Q·Kᵀ: both operands descriptors (`}, %rd.., %rd.., p, 1, 1, 0, 0;`).
        let ss = wgmmas.iter().filter(|l| l.contains("m64n128k16.f32.bf16.bf16") && l.contains(", p, 1, 1, 0, 0;"));
        assert!(ss.count() > 0, "`.entry {kernel}`: no SS wgmma m64n128k16 for S");
        // O += P·V: A from four registers, B N-major (imm-trans-b 1).
        let rs = wgmmas.iter().filter(|l| {
            l.contains(&format!("{pv_shape}.f32.bf16.bf16")) && l.contains("}, {%r") && l.contains(", p, 1, 1, 1;")
        });
        assert!(rs.count() > 0, "`.entry {kernel}`: no RS wgmma {pv_shape} with B N-major for P·V:\n{wgmmas:?}");
        assert!(!body.contains(".local"), "{kernel} spills to local memory");
        let pingpong = kernel.ends_with("_pp");
        assert_eq!(body.contains("bar.arrive"), pingpong, "`.entry {kernel}`: named-barrier turns iff ping-pong");
    }
    let cubin = std::env::temp_dir().join(format!("attention-check-{}.cubin", std::process::id()));
    let out = std::process::Command::new(ptxas())
        .args(["-arch=sm_90a", "-v"])
        .arg(&path)
        .arg("-o")
        .arg(&cubin)
        .output()
        .expect("run ptxas");
    let report = stderr(&out);
    assert!(out.status.success(), "ptxas -arch=sm_90a {} failed:\n{report}", path.display());
    assert!(!report.contains("serialized"), "ptxas serialises the wgmmas:\n{report}");
    assert!(!report.contains("C7508"), "ptxas ignored setmaxnreg:\n{report}");
}
