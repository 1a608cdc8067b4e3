//! Golden PTX checks of issue 11's code generation (no GPU needed), on one crate built with
//! `cargo oxide build --release` for sm_80 and sm_90: bounds checks that do not branch per
//! element (the transpose), vector loads and stores, f16/bf16 and packed-half instructions,
//! `cp.async`, `.const` memory, `#[fast_math]` against IEEE, and `#[unroll]` metadata.
use std::sync::OnceLock;

use oxide_tests::ptx::{Built, entry};
use oxide_tests::*;

const ARCHS: [&str; 2] = ["sm_80", "sm_90"];

const PERF: &str = r#"
#![feature(f16)]
use cuda_device::half::{bf16, Bf16x2, Bf16x8, F16x2, F16x8};
use cuda_device::vector::{as_vectors, F32x4, F64x2, SharedLanes};
use cuda_device::matrix::Matrix;
use cuda_device::{async_copy, cuda_module, fast_math, kernel, launch_bounds, sync_threads, thread, ConstantMemory, DisjointSlice, SharedMemory};

static COEFFS: ConstantMemory<[f32; 4]> = ConstantMemory::new([1.0, 2.0, 3.0, 4.0]);

#[cuda_module]
mod kernels {
    use super::*;

    // The bench's transpose, with ordinary (usize) safe indexing of both slices and checked
    // accesses of the shared tile.
    #[kernel]
    #[launch_bounds(256)]
    pub fn transpose(input: &[f32], out: &mut [f32], width: u32, height: u32) {
        static T: SharedMemory<f32, { 32 * 33 }> = SharedMemory::UNINIT;
        let (w, h) = (width as usize, height as usize);
        let (tx, ty) = (thread::threadIdx_x() as usize, thread::threadIdx_y() as usize);
        let (bx, by) = (thread::blockIdx_x() as usize, thread::blockIdx_y() as usize);
        let (x, y) = (bx * 32 + tx, by * 32 + ty);
        let mut j = 0;
        while j < 32 {
            if x < w && y + j < h {
                unsafe { T.write((ty + j) * 33 + tx, input[(y + j) * w + x]) };
            }
            j += 8;
        }
        sync_threads();
        let (x, y) = (by * 32 + tx, bx * 32 + ty);
        let mut j = 0;
        while j < 32 {
            if x < h && y + j < w {
                out[(y + j) * h + x] = unsafe { T.read(tx * 33 + ty + j) };
            }
            j += 8;
        }
    }

    // Phase 1 of the transpose through a Matrix view: the edge guard is the bounds check.
    #[kernel]
    #[launch_bounds(256)]
    pub fn transpose_view(input: &[f32], out: &mut [f32], width: u32, height: u32) {
        static T: SharedMemory<f32, { 32 * 33 }> = SharedMemory::UNINIT;
        let (w, h) = (width as usize, height as usize);
        let Some(m) = Matrix::new(input, h, w) else { return };
        let (tx, ty) = (thread::threadIdx_x() as usize, thread::threadIdx_y() as usize);
        let (x, y) = (thread::blockIdx_x() as usize * 32 + tx, thread::blockIdx_y() as usize * 32 + ty);
        let mut j = 0;
        while j < 32 {
            if x < w && y + j < h {
                unsafe { T.write((ty + j) * 33 + tx, m[(y + j, x)]) };
            }
            j += 8;
        }
        sync_threads();
        if tx < out.len() {
            out[tx] = unsafe { T.read(tx) };
        }
    }

    #[kernel]
    pub fn vec4_add(a: &[F32x4], b: &[F32x4], mut c: DisjointSlice<F32x4>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = c.get_mut(idx) { *o = a[i] + b[i]; }
    }

    #[kernel]
    pub fn f64x2_scale(a: &[F64x2], k: f64, mut c: DisjointSlice<F64x2>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = c.get_mut(idx) { *o = a[i] * F64x2::splat(k); }
    }

    #[kernel]
    pub fn halves(s: f16, x: &[f16], q: &[Bf16x2], p: &[F16x2], f: &[f32], mut o1: DisjointSlice<f16>, mut o2: DisjointSlice<Bf16x2>, mut o3: DisjointSlice<F16x2>, mut o4: DisjointSlice<bf16>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = o1.get_mut(idx) { *o = x[i] * s + x[i]; }
        if let Some(o) = o2.get_mut(idx) { *o = q[i].mul_add(q[i], q[i]).max(Bf16x2::from_f32(f[i], 0.0)); }
        if let Some(o) = o3.get_mut(idx) { *o = p[i] * p[i] + F16x2::from_f32(f[i], 1.0); }
        if let Some(o) = o4.get_mut(idx) { *o = bf16::from_f32(f[i]); }
    }

    // Eight halves per load: the vector types, and a half slice viewed as them.
    #[kernel]
    pub fn half_vectors(a: &[F16x8], b: &[Bf16x8], x: &[f16], mut o1: DisjointSlice<F16x8>, mut o2: DisjointSlice<Bf16x8>, mut o3: DisjointSlice<F16x8>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = o1.get_mut(idx) { *o = a[i].mul_add(a[i], a[i]); }
        if let Some(o) = o2.get_mut(idx) { *o = b[i] * b[i] + b[i]; }
        if let (Some(o), Some(v)) = (o3.get_mut(idx), as_vectors::<F16x8>(x)) { *o = v[i] + v[i]; }
    }

    #[kernel]
    #[launch_bounds(256)]
    pub fn async_tile(src: &[F32x4], out: &mut [f32]) {
        static TILE: SharedMemory<F32x4, 256> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let g = thread::index_1d().get();
        if g < src.len() {
            unsafe { async_copy::cp_async_cg_16(TILE.as_mut_ptr().add(t).cast(), src.as_ptr().add(g).cast()) };
        }
        async_copy::cp_async_commit_group();
        async_copy::wait_group::<0>();
        sync_threads();
        if g < out.len() {
            out[g] = unsafe { TILE.read(255 - t) }.x() * COEFFS.get_ref()[t % 4];
        }
    }

    #[kernel]
    #[fast_math]
    pub fn fast(x: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let v = x[idx.get()];
        if let Some(o) = out.get_mut(idx) { *o = v.exp() / (1.0 + v) + 1.0 / v.sqrt(); }
    }

    #[kernel]
    pub fn precise(x: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let v = x[idx.get()];
        if let Some(o) = out.get_mut(idx) { *o = v.exp() / (1.0 + v) + 1.0 / v.sqrt(); }
    }

    // A shared array as large as the block and indexed by the thread: `launch_bounds` proves
    // every access in bounds (`255 - t` would otherwise wrap for t >= 256 and fail its check).
    // The tile loop re-reads the tile with no check inside it.
    #[kernel]
    #[launch_bounds(256)]
    pub fn block_tile(v: f32, n: u32, mut out: DisjointSlice<f32>) {
        static TILE: SharedMemory<f32, 256> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x() as usize;
        unsafe { TILE.write(t, v * t as f32) };
        sync_threads();
        let mut acc = 0.0f32;
        for _ in 0..n {
            acc += unsafe { TILE.read(255 - t) };
        }
        if let Some(o) = out.get_mut(thread::index_1d()) { *o = acc; }
    }

    // A loop without checks after a check whose access comes later (so its failure is a pending
    // flag): the deferred trap goes before the loop, not into its body.
    #[kernel]
    pub fn quiet_loop(x: &[f32], i: u32, n: u32, mut out: DisjointSlice<f32>) {
        let r = &x[i as usize];
        let mut acc = 0.0f32;
        let mut k = 0;
        while k < n {
            acc = acc * 0.5 + 1.0;
            k += 1;
        }
        if let Some(o) = out.get_mut(thread::index_1d()) { *o = if n == 7 { acc + *r } else { acc }; }
    }

    // Four accesses of each slice at constant offsets from one index (softmax / layernorm):
    // one check per slice, one address with immediate offsets.
    #[kernel]
    #[launch_bounds(256)]
    pub fn rows(x: &[f32], y: &mut [f32]) {
        let t = thread::threadIdx_x() as usize;
        let base = thread::blockIdx_x() as usize * 1024;
        let mut v = [0.0f32; 4];
        #[unroll]
        for j in 0..4 {
            v[j] = x[base + t + 256 * j];
        }
        #[unroll]
        for j in 0..4 {
            y[base + t + 256 * j] = v[j] * 2.0;
        }
    }

    // A loop with a constant range (n-body's inner loop): a 32-bit counter.
    #[kernel]
    #[launch_bounds(128)]
    pub fn tile_sum(x: &[f32], mut out: DisjointSlice<f32>) {
        static TILE: SharedMemory<f32, 128> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x() as usize;
        unsafe { TILE.write(t, x[t]) };
        sync_threads();
        let mut acc = 0.0f32;
        #[unroll(8)]
        for j in 0..128 {
            acc = acc * 0.5 + unsafe { TILE.read(j) };
        }
        if let Some(o) = out.get_mut(thread::index_1d()) { *o = acc; }
    }

    #[kernel]
    #[launch_bounds(128)]
    pub fn toggled_tiles(x: &[u32], mut out: DisjointSlice<u32>) {
        static BUF: SharedMemory<u32, 256> = SharedMemory::UNINIT;
        let idx = thread::index_1d();
        let mut acc = x[idx.get()];
        let t = thread::threadIdx_x() as usize;
        unsafe { BUF.write(t, x[t]) };
        sync_threads();
        let (mut buf, mut tile) = (0, 0);
        while tile < x.len() {
            let next = tile + 128;
            let v = if next < x.len() { x[next + t] } else { 0 };
            #[unroll(8)]
            for j in 0..128 {
                acc = acc.wrapping_mul(3).wrapping_add(unsafe { BUF.read(buf * 128 + j) });
            }
            unsafe { BUF.write((buf ^ 1) * 128 + t, v) };
            sync_threads();
            buf ^= 1;
            tile = next;
        }
        if let Some(o) = out.get_mut(idx) { *o = acc; }
    }

    // n-body's shape: the thread's index is computed first and used only after the tile loop.
    #[kernel]
    #[launch_bounds(128)]
    pub fn index_after_loop(x: &[f32], mut out: DisjointSlice<f32>) {
        static TILE: SharedMemory<f32, 128> = SharedMemory::UNINIT;
        let idx = thread::index_1d();
        let t = thread::threadIdx_x() as usize;
        let mut acc = 0.0f32;
        let mut tile = 0;
        while tile < x.len() {
            unsafe { TILE.write(t, x[tile + t]) };
            sync_threads();
            for j in 0..128 {
                acc += unsafe { TILE.read(j) };
            }
            sync_threads();
            tile += 128;
        }
        if let Some(o) = out.get_mut(idx) { *o = acc; }
    }

    #[kernel]
    pub fn unrolled(x: &[f32], n: u32, mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let mut acc = 0.0f32;
        #[unroll(4)]
        for k in 0..n as usize {
            acc += x[k];
        }
        if let Some(o) = out.get_mut(idx) { *o = acc; }
    }
}

// The same body twice: `#[inline(always)]` is inlined at both calls (as rustc's own LLVM backend
// does), the unmarked copy is left to LLVM's inliner, which keeps it a call.
macro_rules! mix {
    ($acc:ident, $x:ident, $base:ident, $($i:literal)*) => {
        $( $acc[$i] = $acc[$i].mul_add($x[$base + $i], $acc[($i + 1) % 32]).sin(); )*
        $( $acc[$i] = $acc[$i].mul_add($x[$base + 32 + $i], $acc[($i + 5) % 32]).cos(); )*
    };
}

#[inline(always)]
fn mix_always(acc: &mut [f32; 32], x: &[f32], base: usize) {
    mix!(acc, x, base, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
}

fn mix_default(acc: &mut [f32; 32], x: &[f32], base: usize) {
    mix!(acc, x, base, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
}

#[cuda_module]
mod inlining {
    use super::*;

    #[kernel]
    pub fn inline_always(x: &[f32], y: &[f32], mut out: DisjointSlice<f32>) {
        let mut acc = [1.0f32; 32];
        mix_always(&mut acc, x, 0);
        mix_always(&mut acc, y, 256);
        if let Some(o) = out.get_mut(thread::index_1d()) { *o = acc.iter().sum(); }
    }

    #[kernel]
    pub fn inline_default(x: &[f32], y: &[f32], mut out: DisjointSlice<f32>) {
        let mut acc = [1.0f32; 32];
        mix_default(&mut acc, x, 0);
        mix_default(&mut acc, y, 256);
        if let Some(o) = out.get_mut(thread::index_1d()) { *o = acc.iter().sum(); }
    }
}

fn main() {}
"#;

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| Built::release("e2e-perf-codegen", PERF, &ARCHS))
}

/// The bench's own kernels (bench/src/kernels.rs and the GEMM examples'), as they are timed.
fn bench() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| Built::from_project(bench_kernels_project("e2e-perf-bench"), &["sm_90a"], "release"))
}

fn ptx(arch: &str) -> String {
    built().ptx(arch)
}

fn assert_entry_has(kernel: &str, needles: &[&str]) {
    built().assert_entry_has(kernel, needles);
}

#[test]
fn every_ptx_passes_ptxas() {
    built().assert_ptxas();
}

#[test]
fn transpose_has_no_trap_branch_per_element() {
    for arch in ARCHS {
        let text = ptx(arch);
        let (body, fast) = ptx::copies(&text, "transpose");
        // Four guarded accesses of each slice and eight of the tile, all bounds-checked: no
        // branch to a trap block among them; at most one predicated trap, after the last store
        // (the deferred checks of the shared tile; the slices' accesses fault when poisoned).
        assert_eq!(body.matches("ld.global.nc").count(), 4, "{arch}:\n{body}");
        assert_eq!(body.matches("st.global").count(), 4, "{arch}:\n{body}");
        assert!(!body.contains("trap; exit"), "{arch}: a trap block remains:\n{body}");
        let traps: Vec<&str> = body.lines().filter(|l| l.contains("trap;")).collect();
        assert!(traps.len() <= 1, "{arch}: expected at most one deferred trap, found {traps:?}");
        if let Some(trap) = traps.first() {
            assert!(trap.trim_start().starts_with("@%p"), "{arch}: the trap is not predicated: {trap}");
            let last_store = body.rfind("st.global").unwrap();
            assert!(body.find("trap;").unwrap() > last_store, "{arch}: the trap comes before the last store:\n{body}");
        }
        // The slice accesses' addresses are poisoned by a select on the failed check.
        assert!(body.contains("selp.b64"), "{arch}: no poisoned address:\n{body}");
        // The copy for `h * w <= input.len()`, `w * h <= out.len()` and blocks of at most
        // 32 x 8: the same accesses, no check left.
        assert_eq!(fast.matches("ld.global.nc").count(), 4, "{arch}:\n{fast}");
        assert_eq!(fast.matches("st.global").count(), 4, "{arch}:\n{fast}");
        assert!(!fast.contains("selp.b64") && !fast.contains("trap;"), "{arch}: a check in the fast copy:\n{fast}");
        // Its slice indices `(y + j) * w + x` in 32 bits (lengths at most 2^32 in that copy's
        // condition): a `mad.lo.s32` each and one `mul.wide.u32` per address, no 64-bit multiply
        // by the row width.
        assert!(fast.matches("mul.wide.u32").count() >= 8, "{arch}: addresses not from 32-bit indices:\n{fast}");
        assert!(fast.contains("mad.lo.s32"), "{arch}: no 32-bit row-major index:\n{fast}");
    }
}

#[test]
fn uniform_bounds_give_a_copy_without_checks() {
    for arch in ARCHS {
        let text = ptx(arch);
        for kernel in ["vec4_add", "f64x2_scale", "transpose_view"] {
            let (checked, fast) = ptx::copies(&text, kernel);
            assert!(!fast.is_empty(), "{arch}: `{kernel}` has no fast copy:\n{checked}");
            // A check: a poisoned address (`selp.b64`) or a deferred trap (the tile's checks in
            // `transpose_view`, whose flags are `selp.b32`).
            let has_check = checked.contains("selp.b64") || checked.contains("trap;");
            assert!(has_check, "{arch}: `{kernel}`'s checked copy has no check:\n{checked}");
            assert!(!fast.contains("selp."), "{arch}: `{kernel}`'s fast copy has a poisoned address or flag:\n{fast}");
            assert!(!fast.contains("trap;"), "{arch}: `{kernel}`'s fast copy has a trap:\n{fast}");
            assert!(fast.contains("ld.global"), "{arch}: `{kernel}`'s fast copy loads nothing:\n{fast}");
        }
    }
}

/// A versioned kernel also gets its fast copy alone as `<entry>__oxide_fast_<hash>`, and the manifest
/// the condition the host tests before launching it (`oxide_contract::fast_launch`).
#[test]
fn versioned_kernels_get_an_unchecked_twin() {
    let manifest_path = built().artifact_path(|_| oxide_contract::naming::files::MANIFEST.to_string());
    let text = std::fs::read_to_string(&manifest_path).expect("manifest.json");
    let manifest = oxide_contract::Manifest::from_json(&text).expect("a manifest");
    for arch in ARCHS {
        let ptx = ptx(arch);
        for kernel in ["vec4_add", "f64x2_scale", "transpose_view"] {
            let info = manifest.kernel(kernel).expect("the kernel's manifest entry");
            let fast = info.fast.as_ref().unwrap_or_else(|| panic!("`{kernel}` has no twin in the manifest"));
            let named = fast.entry.strip_prefix(&format!("{kernel}__oxide_fast_"));
            assert!(named.is_some_and(|hash| hash.len() == 16), "`{kernel}`'s twin: {}", fast.entry);
            let twin = entry(&ptx, &fast.entry);
            assert!(!twin.contains("selp.") && !twin.contains("trap;"), "{arch}: `{kernel}`'s twin checks:\n{twin}");
            // The fast copy's loads, and nothing of the entry test's extents.
            assert!(twin.contains("ld.global"), "{arch}: `{kernel}`'s twin loads nothing:\n{twin}");
            assert!(!twin.contains("%nctaid.y"), "{arch}: `{kernel}`'s twin tests the launch:\n{twin}");
            // The kernel keeps its checked copy alone: no test at entry, no copy without checks.
            let (_, in_kernel) = ptx::in_kernel_copies(entry(&ptx, kernel));
            assert!(in_kernel.is_empty(), "{arch}: `{kernel}` still has its own fast copy:\n{}", entry(&ptx, kernel));
            // Its source lines, as the kernel's (profilers attribute its time to them).
            assert_eq!(twin.contains(".loc"), entry(&ptx, kernel).contains(".loc"), "{arch}: `{kernel}`:\n{twin}");
        }
    }
}

#[test]
fn matrix_view_checks_once() {
    for arch in ARCHS {
        let text = ptx(arch);
        let body = entry(&text, "transpose_view");
        let phase1 = &body[..body.find("bar.sync").expect("a barrier")];
        assert_eq!(phase1.matches("ld.global.nc").count(), 4, "{arch}:\n{body}");
        // The guard `x < w && y + j < h` is the view's check: no poisoned address, no trap block.
        assert!(!phase1.contains("selp.b64"), "{arch}: a per-access check remains:\n{phase1}");
        assert!(!body.contains("trap; exit"), "{arch}:\n{body}");
    }
}

#[test]
fn vector_elements_load_and_store_whole() {
    assert_entry_has("vec4_add", &["ld.global.nc.v4.b32", "st.global.v4.b32", ".ptr .align 16"]);
    assert_entry_has("f64x2_scale", &["ld.global.nc.v2.b64", "st.global.v2.b64"]);
    for arch in ARCHS {
        let text = ptx(arch);
        let body = entry(&text, "vec4_add");
        assert!(!body.contains("ld.global.nc.b32"), "{arch}: scalar loads of F32x4:\n{body}");
    }
}

#[test]
fn half_vectors_load_and_store_sixteen_bytes() {
    // Eight halves per access, from `&[F16x8]` and from a `&[f16]` viewed as vectors; the
    // arithmetic stays on packed pairs.
    assert_entry_has(
        "half_vectors",
        &["ld.global.nc.v4.b32", "st.global.v4.b32", "fma.rn.f16x2", "fma.rn.bf16x2", "add.f16x2"],
    );
    for arch in ARCHS {
        let text = ptx(arch);
        let body = entry(&text, "half_vectors");
        for scalar in ["ld.global.nc.b16", "ld.global.nc.b32 ", "st.global.b16", "st.global.b32 "] {
            assert!(!body.contains(scalar), "{arch}: half vectors accessed piecewise (`{scalar}`):\n{body}");
        }
    }
}

#[test]
fn half_precision_uses_half_instructions() {
    assert_entry_has(
        "halves",
        &["fma.rn.f16 ", "fma.rn.bf16x2", "cvt.rn.bf16x2.f32", "cvt.rn.f16x2.f32", "cvt.rn.bf16.f32"],
    );
    assert_entry_has("halves", &["max.bf16x2", ".b8 halves_param_0[2]"]);
    // The f16x2 multiply-add of `p * p + ..` contracts like f32 arithmetic does.
    assert_entry_has("halves", &["fma.rn.f16x2"]);
}

#[test]
fn cp_async_and_constant_memory() {
    assert_entry_has(
        "async_tile",
        &["cp.async.cg.shared.global", ", 16;", "cp.async.commit_group", "cp.async.wait_group", "ld.const"],
    );
    for arch in ARCHS {
        let text = ptx(arch);
        assert!(text.contains(".visible .const .align 4 .b8 COEFFS[16]"), "{arch}: no `.const` COEFFS:\n{text}");
    }
}

#[test]
fn fast_math_is_per_kernel() {
    assert_entry_has("fast", &["div.approx.f32", "rsqrt.approx.f32", "ex2.approx"]);
    for arch in ARCHS {
        let text = ptx(arch);
        let body = entry(&text, "precise");
        for approx in ["div.approx", "rsqrt.approx", "sqrt.approx"] {
            assert!(!body.contains(approx), "{arch}: IEEE kernel has `{approx}`:\n{body}");
        }
        assert!(body.contains("div.rn.f32") && body.contains("sqrt.rn.f32"), "{arch}:\n{body}");
    }
}

#[test]
fn unroll_hint_reaches_llvm() {
    let ll = built().ll();
    assert!(ll.contains("!{!\"llvm.loop.unroll.count\", i32 4}"), "no unroll metadata in the IR");
    assert!(ll.contains(", !llvm.loop !"), "no loop annotated in the IR");
    let marker_calls = ll.lines().filter(|l| l.contains("call ") && l.contains("loop_unroll")).count();
    assert_eq!(marker_calls, 0, "the marker call survived in the IR");
}

#[test]
fn launch_bounds_prove_thread_indexed_shared_accesses() {
    assert_entry_has("block_tile", &[".maxntid 256", "st.shared", "ld.shared"]);
    for arch in ARCHS {
        let text = ptx(arch);
        let body = entry(&text, "block_tile");
        assert!(!body.contains("trap;"), "{arch}: a bounds check of the shared tile remains:\n{body}");
    }
}

/// The first loop of an entry: the block llc marks as its header and every block it annotates
/// `in Loop: Header=<that block>` (llc may place the latch before the header), in text order.
fn first_loop(arch: &str, body: &str) -> String {
    let header = body.find("=>This Inner Loop Header").unwrap_or_else(|| panic!("{arch}: no loop:\n{body}"));
    let label_start = body[..header].rfind("$L__BB").expect("the header's label");
    let label = &body[label_start..label_start + body[label_start..].find(':').expect("a label")];
    let member = format!("Header={} ", &label["$L__".len()..]);
    let mut out = String::new();
    let mut inside = false;
    let lines: Vec<&str> = body.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        // Blocks start at a label or, without one, at llc's `// %bb.N:` comment; a block's
        // loop annotation is the comment line after that.
        if line.starts_with("$L__BB") || line.starts_with("// %bb.") {
            let note = lines.get(i + 1).copied().unwrap_or("");
            inside = line.starts_with(&format!("{label}:")) || note.contains(&member);
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn loops_without_checks_have_no_trap_inside() {
    for arch in ARCHS {
        let text = ptx(arch);
        let body = entry(&text, "quiet_loop");
        assert!(body.contains("trap;"), "{arch}: the pending check has no trap:\n{body}");
        let the_loop = first_loop(arch, body);
        assert!(the_loop.contains("add.f32") || the_loop.contains("fma.rn.f32"), "{arch}: not the loop:\n{the_loop}");
        assert!(!the_loop.contains("trap;"), "{arch}: a trap in the loop:\n{body}");
    }
}

/// The bench's sgemm128: its double buffer's index `buf` toggles between 0 and 1, so the shared
/// accesses at `buf * BK * BM + …` are in bounds; no check, so no trap, stays in the k loop (LLVM
/// alone does not see the toggle's range).
#[test]
fn double_buffer_toggles_leave_no_check_in_the_loop() {
    let arch = "sm_90a";
    let text = bench().ptx(arch);
    let body = entry(&text, "sgemm128");
    let the_loop = first_loop(arch, body);
    assert!(the_loop.contains("st.shared") && the_loop.contains("bar.sync"), "{arch}: not the k loop:\n{the_loop}");
    assert!(!the_loop.contains("trap;"), "{arch}: a trap in the double-buffered loop:\n{body}");
}

#[test]
fn tile_loops_lose_their_checks_in_the_fast_copy() {
    // The bench's sgemm (`a[row * n + t + tx]` while `t < n`, `t += 32`) and n-body
    // (`pos[tile + t]` while `tile < len`, `tile += 128`): the induction's bound rounded down to
    // its step, under the guard of the loop's back edge (pipeline/uniform_bounds.rs).
    let text = bench().ptx("sm_90a");
    for kernel in ["sgemm", "nbody"] {
        let (checked, fast) = ptx::copies(&text, kernel);
        assert!(checked.contains("selp.b64"), "`{kernel}`'s checked copy has no check:\n{checked}");
        assert!(!fast.is_empty(), "`{kernel}` has no fast copy:\n{checked}");
        assert!(!fast.contains("selp.b64") && !fast.contains("trap;"), "`{kernel}`'s fast copy has a check:\n{fast}");
        assert!(fast.contains("ld.global"), "`{kernel}`'s fast copy loads nothing:\n{fast}");
    }
}

#[test]
fn a_stencil_loses_its_neighbour_checks_in_the_fast_copy() {
    // The bench's stencil5: `to_linear` tests only `x < n`; the neighbours `c - n`, `c + n`,
    // `c - 1`, `c + 1` of `c = y * n + x < out.len` are bounded through the interior's
    // `x, y != 0, n - 1` (pipeline/uniform_bounds.rs: `!=` facts, differences, row-major indices).
    // (A check poisons its f64 address with this offset; `get_mut`'s `selp` of 0 is no check.)
    let poison = "1152921504875282432";
    let text = bench().ptx("sm_90a");
    let (checked, fast) = ptx::copies(&text, "stencil5");
    assert_eq!(checked.matches(poison).count(), 5, "stencil5's checked copy:\n{checked}");
    assert!(!fast.is_empty(), "stencil5 has no fast copy:\n{checked}");
    assert!(!fast.contains(poison) && !fast.contains("trap;"), "stencil5's fast copy has a check:\n{fast}");
    assert_eq!(fast.matches("ld.global.nc").count(), 6, "stencil5's fast copy:\n{fast}");
}

#[test]
fn accesses_at_constant_offsets_share_one_check() {
    for arch in ARCHS {
        let text = ptx(arch);
        let (checked, fast) = ptx::copies(&text, "rows");
        for (copy, body, checks) in [("checked", &checked, 2), ("fast", &fast, 0)] {
            assert_eq!(body.matches("ld.global.nc.b32").count(), 4, "{arch} {copy}:\n{body}");
            assert_eq!(body.matches("st.global.b32").count(), 4, "{arch} {copy}:\n{body}");
            // One poisoned base per slice, not one per access (none in the fast copy).
            assert_eq!(body.matches("selp.b64").count(), checks, "{arch} {copy}: not one check per slice:\n{body}");
            // The other accesses are the base plus an immediate offset (256 floats apart).
            for offset in ["+1024]", "+2048]", "+3072]"] {
                assert_eq!(body.matches(offset).count(), 2, "{arch} {copy}: no `{offset}` load and store:\n{body}");
            }
        }
    }
}

#[test]
fn constant_range_loops_count_in_32_bits() {
    for arch in ARCHS {
        let text = ptx(arch);
        let body = entry(&text, "tile_sum");
        let the_loop = first_loop(arch, body);
        assert!(the_loop.contains("ld.shared"), "{arch}: not the tile loop:\n{the_loop}");
        // The exit compare is 32-bit (llc's strength reduction may still step a 64-bit byte
        // offset beside it; before `narrow_counters` the compare was `setp.ne.b64`).
        assert!(the_loop.contains("setp.ne.b32") || the_loop.contains("setp.eq.b32"), "{arch}:\n{the_loop}");
        for wide in ["setp.ne.b64", "setp.eq.b64", "setp.ne.s64", "setp.eq.s64", "setp.lt.u64"] {
            assert!(!the_loop.contains(wide), "{arch}: a 64-bit loop counter (`{wide}`):\n{the_loop}");
        }
    }
}

#[test]
fn toggled_tiles_have_no_trap() {
    for arch in ARCHS {
        let text = ptx(arch);
        let body = entry(&text, "toggled_tiles");
        assert!(body.contains("ld.shared") && body.contains("bar.sync"), "{arch}: not the tile loop:\n{body}");
        assert!(!body.contains("trap;"), "{arch}: a shared access keeps its check:\n{body}");
    }
}

#[test]
fn thread_index_is_read_again_after_the_loop() {
    for arch in ARCHS {
        let text = ptx(arch);
        // Both copies (the kernel is versioned: its tile loop's reads are proven in the fast one).
        let (checked, fast) = ptx::copies(&text, "index_after_loop");
        for body in [checked, fast].iter().filter(|b| !b.is_empty()) {
            // The loops end at the last barrier; the index is not kept in registers through them.
            let loops_end = body.rfind("bar.sync").unwrap_or_else(|| panic!("{arch}: no tile loop:\n{body}"));
            assert!(!body[..loops_end].contains("%ctaid.x"), "{arch}: the index is computed before the loop:\n{body}");
            assert!(body[loops_end..].contains("%ctaid.x;"), "{arch}: no index after the loop:\n{body}");
        }
    }
}

#[test]
fn flat_fast_copies_index_in_32_bits() {
    // `thread::index_1d` in the fast copy of a flat launch of at most 2^32 threads, in a kernel
    // with a loop (`pipeline/flat_index_u32.rs`; n-body): the index is one 32-bit `mad`, its
    // addresses `mul.wide.u32` of it (ptxas: one `IMAD.WIDE.U32` per pointer, as nvcc's
    // `int i`). Straight-line kernels keep the 64-bit index, measured faster there (vecadd).
    let arch = "sm_90a";
    let text = bench().ptx(arch);
    let (_, fast) = ptx::copies(&text, "nbody");
    assert!(fast.contains("mad.lo.s32"), "nbody: the index is not 32-bit:\n{fast}");
    assert!(fast.contains("mul.wide.u32"), "nbody: no `mul.wide.u32` address:\n{fast}");
    for kernel in ["vecadd", "saxpy"] {
        let (_, fast) = ptx::copies(&text, kernel);
        assert!(!fast.is_empty() && fast.contains("shl.b64"), "{kernel}: not the 64-bit index:\n{fast}");
    }
}

/// examples/gemm (on `cuda_device::tile`), as the bench times it: TMA loads onto mbarriers (and
/// multicast in a cluster), `wgmma` m64n256k16 whose completion is awaited one k tile late
/// (`wait_group 1`), `setmaxnreg` for the producer and consumer warpgroups, the stage released
/// to the other block of the cluster with `mapa` + a remote arrive, the epilogue staged by
/// `stmatrix` and stored by TMA, the layouts' transposes as `wgmma` immediates — and the 64 × 256
/// f32 accumulator kept in registers (no local memory anywhere).
#[test]
fn gemm_tile_example_is_tma_wgmma_mbarriers_and_setmaxnreg() {
    let text = bench().ptx("sm_90a");
    let common = [
        "setmaxnreg.dec.sync.aligned.u32 40",
        "setmaxnreg.inc.sync.aligned.u32 232",
        "mbarrier.init.shared.b64",
        "mbarrier.arrive.expect_tx.shared::cta.b64",
        "mbarrier.try_wait.parity.shared::cta.b64",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        "wgmma.fence.sync.aligned",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
        "wgmma.commit_group.sync.aligned",
        "wgmma.wait_group.sync.aligned 1",
        "wgmma.wait_group.sync.aligned 0",
    ];
    // (kernel, its transposes: the last two immediates of its wgmma)
    let kernels = [
        ("gemm", "0, 0;"),
        ("gemm_cluster", "0, 0;"),
        ("gemm_direct", "0, 0;"),
        ("gemm_a_colmajor", "1, 0;"),
        ("gemm_b_rowmajor", "0, 1;"),
        ("gemm_a_colmajor_b_rowmajor", "1, 1;"),
    ];
    for (kernel, transposes) in kernels {
        let body = entry(&text, kernel);
        for needle in common {
            assert!(body.contains(needle), "`.entry {kernel}` has no `{needle}`");
        }
        // One wgmma per 16-deep K step of a 64-deep stage: the mainloop is unrolled.
        let mmas: Vec<&str> = body.lines().filter(|l| l.contains("wgmma.mma_async")).collect();
        assert_eq!(mmas.len(), 4, "`{kernel}`: not 4 wgmma per stage");
        assert!(mmas.iter().all(|l| l.contains(&format!("p, 1, 1, {transposes}"))), "`{kernel}`: {mmas:?}");
        assert!(!body.contains(".local"), "`{kernel}`: something (the accumulator?) went to local memory");
    }
    let cluster = entry(&text, "gemm_cluster");
    for needle in [
        ".reqnctapercluster 2, 1, 1",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster",
        "mapa.shared::cluster.u32",
        "mbarrier.arrive.shared::cluster.b64",
        "barrier.cluster.arrive",
    ] {
        assert!(cluster.contains(needle), "`.entry gemm_cluster` has no `{needle}`");
    }
    for kernel in ["gemm", "gemm_cluster", "gemm_fp8"] {
        let staged = entry(&text, kernel);
        for needle in [
            "stmatrix.sync.aligned.m8n8.x4.shared.b16",
            "fence.proxy.async.shared::cta",
            "bar.sync",
            "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group",
        ] {
            assert!(staged.contains(needle), "`.entry {kernel}` has no `{needle}`");
        }
    }
    bench().assert_ptxas();
}

#[test]
fn inline_always_is_honoured() {
    for arch in ARCHS {
        let text = ptx(arch);
        let calls = |kernel: &str| entry(&text, kernel).matches("call.uni").count();
        assert!(calls("inline_default") > 0, "{arch}: LLVM inlined the unmarked helper by itself; make it bigger");
        assert_eq!(calls("inline_always"), 0, "{arch}:\n{}", entry(&text, "inline_always"));
        assert!(!text.contains("mix_always"), "{arch}: a copy of the #[inline(always)] helper is left");
    }
}
