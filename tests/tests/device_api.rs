//! Golden PTX checks of the device API (no GPU needed): one crate whose kernels use shared
//! memory, barriers, atomics, warp operations, printf/assert/trap/clock64 and launch bounds,
//! built for sm_80, sm_90 and sm_100a; one cluster crate built for sm_90 and sm_100a; and the
//! compile errors (cluster kernel for sm_80, bad `gpu_printf!` formats).
use std::sync::OnceLock;

use oxide_tests::ptx::{Built, entry};
use oxide_tests::*;

const ARCHS: [&str; 3] = ["sm_80", "sm_90", "sm_100a"];
const CLUSTER_ARCHS: [&str; 2] = ["sm_90", "sm_100a"];

const DEVICE_API: &str = r#"
use cuda_device::{DisjointSlice, SharedArray, SharedMemory, atomic, cuda_module, gpu_assert, gpu_printf, kernel, launch_bounds, shared, sync, sync_threads, thread, warp};

/// Shared memory declared at module level, 128-byte aligned: one copy per block of each kernel
/// that uses it.
static STAGE: SharedMemory<u32, 64, 128> = SharedMemory::UNINIT;

#[cuda_module]
mod kernels {
    use super::*;

    // A plain `static` in the kernel and one at module level: element methods, a checked
    // element address for an atomic, and the raw base address.
    #[kernel]
    #[launch_bounds(64)]
    pub fn shared_statics(x: &[u32], out: &mut [u32]) {
        static TILE: SharedMemory<u32, 64> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let i = thread::index_1d().get();
        unsafe { TILE.write(t, if i < x.len() { x[i] } else { 0 }) };
        unsafe { STAGE.write(t, 0) };
        sync_threads();
        unsafe { atomic::block::add(STAGE.element_ptr(TILE.read(t) as usize % 64), 1u32) };
        sync_threads();
        if i < out.len() {
            out[i] = unsafe { STAGE.read(t) + STAGE.as_ptr().add(63 - t).read() };
        }
    }

    #[kernel]
    #[launch_bounds(256, 2)]
    pub fn shared_reduce(x: &[f32], sums: &mut [f32]) {
        static mut TILE: SharedArray<f32, 256> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x() as usize;
        let i = thread::index_1d().get();
        unsafe { TILE[tid] = if i < x.len() { x[i] } else { 0.0 } };
        sync_threads();
        let mut s = 128;
        while s > 0 {
            if tid < s {
                unsafe { TILE[tid] = TILE[tid] + TILE[tid + s] };
            }
            sync_threads();
            s /= 2;
        }
        if tid == 0 {
            sums[thread::blockIdx_x() as usize] = unsafe { TILE[0] };
        }
    }

    #[kernel]
    pub fn histogram(data: &[u8], bins: &mut [u32]) {
        static mut COUNTS: SharedArray<u32, 256> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x() as usize;
        unsafe { COUNTS[tid] = 0 };
        sync_threads();
        for i in thread::grid_stride(data.len()) {
            unsafe { atomic::block::add(&raw mut COUNTS[data[i.get()] as usize], 1u32) };
        }
        sync_threads();
        unsafe { atomic::add(bins.as_mut_ptr().add(tid), COUNTS[tid]) };
        sync::fence_device();
    }

    #[kernel]
    pub fn warp_ops(x: &[i32], mut sums: DisjointSlice<i32>, mut counts: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let v = x[idx.get()];
        let s = warp::reduce_sum(v);
        let b = warp::ballot_sync(warp::FULL_MASK, v > 0);
        let all = warp::all_sync(warp::FULL_MASK, v != 0);
        let m = warp::match_any_sync(warp::FULL_MASK, v);
        if let Some(o) = sums.get_mut(idx) { *o = s + all as i32; }
        if let Some(c) = counts.get_mut(idx) { *c = b.count_ones() + m; }
    }

    #[kernel]
    pub fn transpose(input: &[f32], out: &mut [f32], n: u32) {
        let tile = shared::dynamic::<f32>();
        let p = thread::index_2d_xy();
        let (tx, ty) = (thread::threadIdx_x() as usize, thread::threadIdx_y() as usize);
        let n = n as usize;
        if p.x() < n && p.y() < n {
            unsafe { tile.write(ty * 17 + tx, input[p.y() * n + p.x()]) };
        }
        sync_threads();
        if p.x() < n && p.y() < n {
            out[p.x() * n + p.y()] = unsafe { tile.read(ty * 17 + tx) };
        }
    }

    #[kernel]
    pub fn debug(x: &[f32], mut out: DisjointSlice<u64>) {
        let idx = thread::index_1d();
        let i = idx.get();
        gpu_printf!("thread %u: x = %f, i = %lu\n", thread::threadIdx_x(), x[i], i);
        gpu_assert!(x[i] >= 0.0, "negative at %lu\n", i);
        if let Some(o) = out.get_mut(idx) { *o = cuda_device::clock64(); }
        if x[i] == 12345.0 { cuda_device::trap(); }
    }
}

fn main() {}
"#;

/// The GPU test's cluster kernels (tests/gpu/cluster-neighbour), built here for their PTX.
const CLUSTER_KERNELS: &str = include_str!("../gpu/cluster-neighbour/src/kernels.rs");

/// [`CLUSTER_KERNELS`] as a crate of its own.
fn cluster_src() -> String {
    format!("{CLUSTER_KERNELS}\nfn main() {{}}\n")
}

fn device_api() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| Built::new("e2e-device-api", DEVICE_API, &ARCHS))
}

fn cluster() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| Built::new("e2e-device-cluster", &cluster_src(), &CLUSTER_ARCHS))
}

#[test]
fn device_api_ptx_passes_ptxas() {
    device_api().assert_ptxas();
}

#[test]
fn shared_memory_barriers_and_launch_bounds() {
    device_api().assert_entry_has(
        "shared_reduce",
        &[".shared", "st.shared", "ld.shared", "bar.sync", ".maxntid 256", ".minnctapersm 2"],
    );
    device_api().assert_entry_has("transpose", &["%dynamic_smem_size", "st.shared", "bar.sync"]);
    for arch in ARCHS {
        assert!(
            device_api().ptx(arch).contains(".extern .shared .align 16 .b8 __oxide_dynamic_shared[]"),
            "{arch}: no dynamic shared memory declaration"
        );
    }
}

#[test]
fn shared_memory_statics_in_a_kernel_and_at_module_level() {
    device_api()
        .assert_entry_has("shared_statics", &["st.shared.b32", "ld.shared.b32", "atom.shared.add.u32", "bar.sync"]);
    for arch in ARCHS {
        let ptx = device_api().ptx(arch);
        // Declared at module scope or, for a static only one kernel uses, inside its entry.
        let decls: Vec<&str> = ptx.lines().map(str::trim).filter(|l| l.starts_with(".shared .align")).collect();
        // The module-level STAGE (64 u32, ALIGN 128) and the kernel's TILE (64 u32).
        let stage = |l: &&str| l.starts_with(".shared .align 128 .b8") && l.contains("STAGE[256];");
        let tile = |l: &&str| l.starts_with(".shared .align 4 .b8") && l.contains("shared_statics4TILE[256];");
        assert!(decls.iter().any(stage) && decls.iter().any(tile), "{arch}: {decls:?}");
    }
}

#[test]
fn atomics_on_shared_and_global_memory() {
    device_api()
        .assert_entry_has("histogram", &["atom.shared.add.u32", "atom.global.add.u32", "bar.sync", "fence.sc.gpu"]);
}

#[test]
fn warp_shuffles_votes_and_match() {
    device_api().assert_entry_has(
        "warp_ops",
        &["shfl.sync.bfly.b32", "vote.sync.ballot.b32", "vote.sync.all.pred", "match.any.sync.b32", "popc.b32"],
    );
}

#[test]
fn printf_assert_trap_and_clock64() {
    device_api().assert_entry_has("debug", &["vprintf", "trap;", "%clock64"]);
    // A failed `gpu_assert!` reaches `__assertfail` in the entry or in the cold function it calls.
    for arch in device_api().archs {
        let text = device_api().ptx(arch);
        let body = entry(&text, "debug");
        assert!(text.matches("__assertfail").count() >= 2, "{arch}: `__assertfail` is declared but never called");
        assert!(
            body.contains("__assertfail") || body.contains("assert_failed"),
            "{arch}: `.entry debug` never asserts"
        );
    }
}

#[test]
fn cluster_ptx_passes_ptxas() {
    cluster().assert_ptxas();
}

#[test]
fn cluster_barrier_mapa_and_attributes() {
    cluster().assert_entry_has(
        "neighbour",
        &[
            ".explicitcluster",
            ".reqnctapercluster 4, 1, 1",
            "barrier.cluster.arrive",
            "barrier.cluster.wait",
            "mapa.u64",
            "%cluster_ctarank",
            "%cluster_nctarank",
        ],
    );
}

/// Builds `src` for `archs`, expecting failure; returns the stderr.
fn build_fails(name: &str, src: &str, archs: &str) -> String {
    let project = TempProject::new(name, src);
    let out = cargo_oxide(project.path(), &["build", "--arch", archs]);
    assert!(!out.status.success(), "{name} built for {archs}, but should have failed");
    stderr(&out)
}

#[test]
fn cluster_kernel_for_sm_80_is_an_error() {
    let err = build_fails("e2e-cluster-sm80", &cluster_src(), "sm_80,sm_90");
    assert!(err.contains("kernel `neighbour` uses #[cluster_launch], which needs sm_90 or newer"), "{err}");
    assert!(err.contains("--arch sm_90"), "{err}");
}

#[test]
fn gpu_printf_formats_are_checked_at_compile_time() {
    let program = |call: &str| {
        format!(
            "use cuda_device::{{cuda_module, gpu_printf, kernel}};\n#[cuda_module]\nmod kernels {{\n    use super::*;\n    \
             #[kernel]\n    pub fn k(x: f32, n: u32) {{ {call}; }}\n}}\nfn main() {{}}\n"
        )
    };
    // Each error is reported at the user's call (src/main.rs), not inside cuda-device.
    let at_call = |err: &str| err.contains("src/main.rs:6:");
    let err = build_fails("e2e-printf-count", &program(r#"gpu_printf!("%u %u\n", n)"#), "sm_90");
    assert!(err.contains("the format has 2 conversions, but 1 argument follows") && at_call(&err), "{err}");
    let err = build_fails("e2e-printf-type", &program(r#"gpu_printf!("%d %u\n", x, n)"#), "sm_90");
    assert!(err.contains("`f32` does not match its `gpu_printf!` conversion") && at_call(&err), "{err}");
    let err = build_fails("e2e-printf-conv", &program(r#"gpu_printf!("%q\n", n)"#), "sm_90");
    assert!(err.contains("unknown conversion `%q`") && at_call(&err), "{err}");
    let err = build_fails("e2e-printf-rust-type", &program(r#"gpu_printf!("{}\n", (n, x))"#), "sm_90");
    assert!(err.contains("`(u32, f32)` cannot be printed by `gpu_printf!`") && at_call(&err), "{err}");
    let err = build_fails("e2e-printf-rust-hex", &program(r#"gpu_printf!("{:x}\n", x)"#), "sm_90");
    assert!(err.contains("need an integer argument"), "{err}");
    // `{n}` captures `n` (as `format!` does), so the explicit `n` is left over.
    let err = build_fails("e2e-printf-rust-named", &program(r#"gpu_printf!("{n}\n", n)"#), "sm_90");
    assert!(err.contains("this argument is never used by the format") && at_call(&err), "{err}");
    let err = build_fails("e2e-printf-rust-star", &program(r#"gpu_printf!("{:.*}\n", n, x)"#), "sm_90");
    assert!(err.contains("from arguments") && at_call(&err), "{err}");
    let err = build_fails("e2e-printf-c-named", &program(r#"gpu_printf!("%u\n", v = n)"#), "sm_90");
    assert!(err.contains("named arguments need Rust's") && at_call(&err), "{err}");
}

/// Kernels whose release build must keep a barrier where the source has it, never hand ptxas a
/// bool-to-float conversion, print with Rust's format syntax as NVIDIA's `gpu_printf!` spells it,
/// and carry nvcc's `.maxntid x, 1, 1`.
const RELEASE: &str = r#"
use cuda_device::{DisjointSlice, SharedArray, cluster, cluster_launch, cuda_module, gpu_printf, kernel, launch_bounds, sync_threads, thread};

#[cuda_module]
mod kernels {
    use super::*;

    // rustc's MIR jump threading used to copy `sync_threads(); cluster::sync()` into both arms
    // of the first `if`, so lane 0 and the other lanes of a warp waited at different `bar.sync`s
    // (a hang on the GPU).
    #[kernel]
    #[cluster_launch(2, 1, 1)]
    pub fn leader_broadcast(mut out: DisjointSlice<u32>) {
        static mut SLOT: SharedArray<u32, 1> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x();
        if tid == 0 {
            unsafe { SLOT[0] = cluster::block_rank() * 100 + 42 };
        }
        sync_threads();
        cluster::sync();
        if tid == 0 {
            let i = cluster::block_rank() as usize;
            if i < out.len() {
                unsafe { *out.get_unchecked_mut(i) = SLOT[0] };
            }
        }
    }

    // A 16-byte-aligned struct copy is one 128-bit load and store, as nvcc makes it for `float4`.
    #[kernel]
    pub fn copy_quads(input: &[Quad], mut output: DisjointSlice<Quad>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = output.get_mut(idx) {
            *o = input[i];
        }
    }

    /// The bits of `(b as i32) as f32` for a bool decided in a loop (oxide-fuzz 3:467: ptxas
    /// turned them into the integer 1 when the conversion reached it as `selp` + `cvt`).
    #[kernel]
    pub fn bool_bits(x: &[u64], mut out: DisjointSlice<u64>) {
        let idx = thread::index_1d();
        let v = x[idx.get() % x.len()];
        let mut b = v & 2 != 0;
        for i in (2usize..=5).step_by(2) {
            if b {
                continue;
            }
            b = v.saturating_add(v) != v.wrapping_shr(i as u32);
        }
        if let Some(o) = out.get_mut(idx) { *o = ((b as i32) as f32).to_bits() as u64; }
    }

    #[kernel]
    #[launch_bounds(128)]
    pub fn formats(n: u32, neg: i32, big: u64, x: f32, y: f64) {
        let w = n;
        gpu_printf!("[{: }|{: }|{:+}|{:-8}|{:08}]\n", n, neg, neg, neg, big);
        gpu_printf!("[{:>8.3}|{:<8.2e}|{:#x}|{:#o}|{:X}]\n", x, y, n, n, big);
        gpu_printf!("[{n}|{w}|{v:5}|{0}]\n", n, v = neg);
    }
}

#[repr(C, align(16))]
#[derive(Clone, Copy, cuda_device::DeviceCopy)]
pub struct Quad([f32; 4]);

fn main() {}
"#;

fn release_built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| Built::release("e2e-device-release", RELEASE, &["sm_90"]))
}

fn release_ptx() -> String {
    release_built().ptx("sm_90")
}

/// The NUL-terminated strings of the PTX's initialised byte arrays (`.b8 name[N] = {37, 117, …}`).
fn ptx_strings(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter(|l| l.contains(".b8") && l.contains("= {"))
        .filter_map(|l| {
            let list = &l[l.find("= {")? + 3..l.rfind('}')?];
            let bytes: Vec<u8> = list
                .split(',')
                .map(|b| b.trim().parse::<u8>().ok())
                .collect::<Option<Vec<u8>>>()?
                .into_iter()
                .take_while(|&b| b != 0)
                .collect();
            String::from_utf8(bytes).ok()
        })
        .collect()
}

#[test]
fn barriers_stay_where_the_source_has_them_in_release_builds() {
    let ptx = release_ptx();
    let body = entry(&ptx, "leader_broadcast");
    assert_eq!(body.matches("bar.sync").count(), 1, "one `sync_threads()`, one `bar.sync`:\n{body}");
    assert_eq!(body.matches("barrier.cluster.arrive").count(), 1, "one `cluster::sync()`:\n{body}");
    assert_eq!(body.matches("barrier.cluster.wait").count(), 1, "one `cluster::sync()`:\n{body}");
}

#[test]
fn aligned_struct_copies_are_128_bit_accesses() {
    let ptx = release_ptx();
    let body = entry(&ptx, "copy_quads");
    assert!(body.contains("ld.global.nc.v4.b32"), "no 128-bit load:\n{body}");
    assert!(body.contains("st.global.v4.b32"), "no 128-bit store:\n{body}");
    assert!(!body.contains("ld.global.nc.b64"), "a 64-bit load is left:\n{body}");
}

#[test]
fn bool_to_float_never_reaches_ptxas_as_a_conversion() {
    let ptx = release_ptx();
    let body = entry(&ptx, "bool_bits");
    assert!(
        !body.contains("cvt.rn.f32.u32") && !body.contains("cvt.rn.f32.s32"),
        "`.entry bool_bits` converts a 0/1 integer to f32 (ptxas miscompiles that):\n{body}"
    );
}

#[test]
fn launch_bounds_print_as_nvcc_does() {
    let ptx = release_ptx();
    assert!(entry(&ptx, "formats").contains(".maxntid 128, 1, 1"), "{}", entry(&ptx, "formats"));
}

#[test]
fn rust_formats_become_c_formats() {
    let strings = ptx_strings(&release_ptx());
    for expected in ["[% u|% d|%+d|%-8d|%08lu]\n", "[%8.3f|%-8.2e|%#x|%#o|%lX]\n", "[%u|%u|%5d|%u]\n"] {
        assert!(strings.iter().any(|s| s == expected), "no format string {expected:?} in the PTX: {strings:?}");
    }
}
