//! Golden PTX checks (no GPU needed) of NVIDIA cuda-oxide's names for constant memory, mbarriers,
//! TMA and wgmma: `#[constant]` statics and their generated `set_<name>` methods, the
//! `cuda_device::barrier` free functions on a `Barrier` static, `cp.async.mbarrier.arrive`,
//! `tma::cp_async_bulk_tensor_2d_g2s`, and the wgmma free functions (sm_90a only: `--arch sm_90`
//! builds that crate for sm_90a and says so); NVIDIA's typestate `ManagedBarrier` handles;
//! `#[cooperative_launch]` recorded in the manifest. Every PTX passes `ptxas`.
use std::sync::OnceLock;

use oxide_tests::ptx::Built;
use oxide_tests::*;

const ARCHS: [&str; 2] = ["sm_80", "sm_90"];
const SM90: [&str; 1] = ["sm_90"];
const SM90A: [&str; 1] = ["sm_90a"];

const SYNC: &str = r#"
use cuda_core::CudaContext;
use cuda_device::async_copy::{cp_async_ca_4, cp_async_mbarrier_arrive, cp_async_mbarrier_arrive_noinc_shared};
use cuda_device::barrier::{Barrier, mbarrier_arrive, mbarrier_init, mbarrier_inval, mbarrier_test_wait, mbarrier_wait};
use cuda_device::{ConstantMemory, DisjointSlice, SharedArray, constant, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[constant]
    static COEFFS: ConstantMemory<[u32; 4]> = ConstantMemory::UNINIT;

    #[constant]
    static NEVER_READ: ConstantMemory<u64> = ConstantMemory::UNINIT;

    #[kernel]
    pub fn poly(x: &[u32], mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let [a, b, c, d] = COEFFS.get();
        if let Some(o) = out.get_mut(idx) {
            *o = a + x[i] * (b + x[i] * (c + x[i] * d));
        }
    }

    #[kernel]
    pub fn meet(x: &[u32], mut out: DisjointSlice<u32>) {
        static mut BAR: Barrier = Barrier::UNINIT;
        static mut DATA: SharedArray<u32, 256> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x();
        let idx = thread::index_1d();
        if tid == 0 {
            unsafe { mbarrier_init(&raw mut BAR, thread::blockDim_x()) };
        }
        thread::sync_threads();
        unsafe {
            cp_async_ca_4(SharedArray::as_raw_mut_ptr(&raw mut DATA).add(tid as usize), x.as_ptr().add(idx.get()));
            cp_async_mbarrier_arrive(&raw mut BAR);
            cp_async_mbarrier_arrive_noinc_shared(&raw mut BAR);
            let token = mbarrier_arrive(&raw const BAR);
            mbarrier_wait(&raw const BAR, token);
            let done = mbarrier_test_wait(&raw const BAR, token);
            if let Some(o) = out.get_mut(idx) {
                *o = DATA[(tid as usize + 1) % 256] + done as u32;
            }
        }
        thread::sync_threads();
        if tid == 0 {
            unsafe { mbarrier_inval(&raw mut BAR) };
        }
    }
}

// Host side: the generated setters take the static's value type.
#[allow(dead_code)]
fn host(ctx: &std::sync::Arc<CudaContext>) -> Result<(), cuda_core::DriverError> {
    let module = kernels::load(ctx)?;
    module.set_coeffs(&ctx.default_stream(), &[1, 2, 3, 4])?;
    module.set_coeffs_blocking(&[5, 6, 7, 8])?;
    module.set_never_read(&ctx.default_stream(), &9)
}

fn main() {}
"#;

const HOPPER: &str = r#"
use cuda_device::barrier::{
    Barrier, fence_proxy_async_shared_cta, mbarrier_arrive, mbarrier_arrive_cluster, mbarrier_arrive_expect_tx,
    mbarrier_init, mbarrier_try_wait, mbarrier_try_wait_parity, nanosleep,
};
use cuda_device::shared::cvta_generic_to_shared_offset;
use cuda_device::tma::{TmaDescriptor, cp_async_bulk_tensor_2d_g2s};
use cuda_device::{DisjointSlice, SharedArray, cluster, cluster_launch, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn tile(map: *const TmaDescriptor, mut out: DisjointSlice<f32>) {
        static mut TILE: SharedArray<f32, 1024, 128> = SharedArray::UNINIT;
        static mut BAR: Barrier = Barrier::UNINIT;
        let tid = thread::threadIdx_x();
        if tid == 0 {
            unsafe {
                mbarrier_init(&raw mut BAR, thread::blockDim_x());
                fence_proxy_async_shared_cta();
            }
        }
        thread::sync_threads();
        let token = unsafe {
            if tid == 0 {
                cp_async_bulk_tensor_2d_g2s(&raw mut TILE as *mut u8, map, 0, 0, &raw mut BAR);
                mbarrier_arrive_expect_tx(&raw const BAR, 1, 4096)
            } else {
                mbarrier_arrive(&raw const BAR)
            }
        };
        unsafe { while !mbarrier_try_wait(&raw const BAR, token) {} }
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = unsafe { TILE[tid as usize] };
        }
    }

    #[kernel]
    #[cluster_launch(4, 1, 1)]
    pub fn rounds(mut out: DisjointSlice<u32>, n: u32) {
        static mut BAR: Barrier = Barrier::UNINIT;
        let tid = thread::threadIdx_x();
        if tid == 0 {
            unsafe { mbarrier_init(&raw mut BAR, 4) };
        }
        thread::sync_threads();
        let remote = unsafe { cvta_generic_to_shared_offset(cluster::map_shared_rank(&raw const BAR, 0) as *const u8) };
        cluster::cluster_sync();
        let mut k = 0;
        while k < n {
            if tid == 0 {
                unsafe { mbarrier_arrive_cluster(remote) };
            }
            if cluster::cluster_ctaidX() == 0 {
                while unsafe { !mbarrier_try_wait_parity(&raw const BAR, k & 1) } {
                    unsafe { nanosleep(32) };
                }
            }
            cluster::cluster_sync();
            k += 1;
        }
        if let Some(o) = out.get_mut(thread::index_1d()) { *o = k; }
    }
}

fn main() {}
"#;

const WGMMA: &str = r#"
use cuda_device::shared::SharedArray;
use cuda_device::wgmma::{make_smem_desc, wgmma_commit_group, wgmma_fence, wgmma_mma_m64n64k16_f32_bf16, wgmma_wait_group};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub unsafe fn mma(mut out: DisjointSlice<u64>) {
        static mut SMEM: SharedArray<u8, 8192, 128> = SharedArray::UNINIT;
        let mut acc = [[0.0f32; 8]; 4];
        unsafe {
            let a = make_smem_desc(&raw const SMEM as *const u8);
            let b = make_smem_desc((&raw const SMEM as *const u8).add(4096));
            wgmma_fence();
            wgmma_mma_m64n64k16_f32_bf16(&mut acc, a, b);
            wgmma_commit_group();
            wgmma_wait_group::<0>();
            if let Some(o) = out.get_mut(thread::index_1d()) {
                *o = a ^ acc[3][7].to_bits() as u64;
            }
        }
    }
}

fn main() {}
"#;

const MANAGED: &str = r#"
use cuda_device::{Barrier, GeneralBarrier, ManagedBarrier, TmaBarrier, Uninit};
use cuda_device::{DisjointSlice, cluster_launch, cooperative_launch, cuda_module, grid, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn managed(mut out: DisjointSlice<u32>) {
        static mut BAR: Barrier = Barrier::UNINIT;
        static mut TMA: Barrier = Barrier::UNINIT;
        let bar = ManagedBarrier::<Uninit, GeneralBarrier>::from_static(&raw mut BAR);
        let tma = ManagedBarrier::<Uninit, TmaBarrier>::from_static(&raw mut TMA);
        let bar = unsafe { bar.init(32) };
        let tma = unsafe { tma.init(32) };
        let token = bar.arrive();
        bar.wait(token);
        let t = tma.arrive_expect_tx(0);
        while !tma.try_wait(t) {}
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = 42;
        }
        unsafe {
            let _ = bar.inval();
            let _ = tma.inval();
        }
    }

    #[kernel]
    #[cooperative_launch]
    pub fn coop(mut out: DisjointSlice<u32>) {
        grid::sync();
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = 1;
        }
    }

    #[cooperative_launch]
    #[kernel]
    #[cluster_launch(2, 1, 1)]
    pub fn coop_cluster(mut out: DisjointSlice<u32>) {
        grid::sync();
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = 2;
        }
    }

    #[kernel]
    pub fn plain(mut out: DisjointSlice<u32>) {
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = 3;
        }
    }
}

fn main() {}
"#;

fn sync() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| Built::new("e2e-compat-sync", SYNC, &ARCHS))
}

fn hopper() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| Built::new("e2e-compat-hopper", HOPPER, &SM90))
}

#[test]
fn constant_statics_are_const_globals_under_their_names() {
    for arch in ARCHS {
        let text = sync().ptx(arch);
        assert!(text.contains(".visible .const .align 4 .b8 COEFFS[16]"), "{arch}: no `.const` COEFFS:\n{text}");
        // A static no kernel reads has no device copy (its setter writes nothing).
        assert!(!text.contains("NEVER_READ"), "{arch}: an unread constant was emitted");
    }
    // The sm_80 mbarrier forms keep the PTX at the arch's own ISA.
    assert!(sync().ptx("sm_80").contains(".version 7.0"), "sm_80 PTX is not ISA 7.0");
    sync().assert_entry_has("poly", &["ld.const"]);
}

#[test]
fn barrier_functions_and_cp_async_arrivals() {
    sync().assert_entry_has(
        "meet",
        &[
            "mbarrier.init.shared.b64",
            "cp.async.mbarrier.arrive.shared.b64",
            "cp.async.mbarrier.arrive.noinc.shared.b64",
            "mbarrier.arrive.shared.b64",
            "mbarrier.test_wait.shared.b64",
            "mbarrier.inval.shared.b64",
        ],
    );
    for arch in ARCHS {
        let text = sync().ptx(arch);
        assert!(
            text.lines().any(|l| l.contains(".shared .align 8 .b8") && l.contains("BAR[8]")),
            "{arch}: the Barrier static is not an 8-byte aligned shared variable:\n{text}"
        );
    }
    sync().assert_ptxas();
}

#[test]
fn hopper_barriers_and_tma() {
    hopper().assert_entry_has(
        "tile",
        &[
            "fence.proxy.async.shared::cta",
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            "mbarrier.try_wait.shared::cta.b64",
        ],
    );
    hopper().assert_entry_has(
        "rounds",
        &[
            "mbarrier.arrive.release.cluster.shared::cluster.b64",
            "mbarrier.try_wait.parity.shared::cta.b64",
            "nanosleep",
        ],
    );
    // TMA and the sm_90 mbarrier forms raise the ISA above sm_90's lowest (7.8).
    assert!(hopper().ptx("sm_90").contains(".version 8.0"), "sm_90 PTX with TMA is not ISA 8.0");
    hopper().assert_ptxas();
}

#[test]
fn wgmma_free_functions_on_sm_90a() {
    let built = Built::new("e2e-compat-wgmma", WGMMA, &SM90A);
    built.assert_entry_has(
        "mma",
        &[
            "wgmma.fence.sync.aligned",
            "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
            "wgmma.commit_group.sync.aligned",
            "wgmma.wait_group.sync.aligned 0",
        ],
    );
    built.assert_ptxas();
}

#[test]
fn wgmma_for_plain_sm_90_builds_sm_90a_with_a_note() {
    let project = TempProject::new("e2e-compat-wgmma-sm90", WGMMA);
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_90"]);
    let err = stderr(&out);
    assert_success(&out, "wgmma crate built with --arch sm_90");
    assert!(
        err.contains("which sm_90 lacks: its device code for sm_90 is built for sm_90a instead")
            && err.contains("--arch sm_90a"),
        "no note about sm_90a:\n{err}"
    );
    let manifest = read_manifest("debug", &project.crate_name());
    let archs: Vec<&str> = manifest.payloads.iter().map(|p| p.arch.as_str()).collect();
    assert!(!archs.is_empty() && archs.iter().all(|a| *a == "sm_90a"), "payloads: {archs:?}");
    // `inspect --arch sm_90` shows what `--arch sm_90` built, sm_90a, and says so.
    let name = project.crate_name();
    let out = cargo_oxide(project.path(), &["inspect", &name, "--ptx", "--arch", "sm_90"]);
    assert_success(&out, "inspect --ptx --arch sm_90 of the sm_90a build");
    assert!(String::from_utf8_lossy(&out.stdout).contains(".target sm_90a"), "not the sm_90a PTX");
    assert!(stderr(&out).contains("was built for sm_90a, not sm_90"), "no note: {}", stderr(&out));
    let out = cargo_oxide(project.path(), &["inspect", &name, "--ptx", "--arch", "sm_80"]);
    assert!(!out.status.success(), "inspect showed PTX for an arch not built");
    assert!(stderr(&out).contains("has no PTX for sm_80 (built: sm_90a)"), "{}", stderr(&out));
    // An arch with no variant that has wgmma is still an error naming sm_90a.
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_80,sm_90"]);
    assert!(!out.status.success(), "wgmma built for sm_80");
    let err = stderr(&out);
    assert!(err.contains("needs sm_90a, but this build targets sm_80") && err.contains("--arch sm_90a"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn managed_barrier_typestate_handles() {
    let built = Built::new("e2e-compat-managed", MANAGED, &SM90);
    built.assert_entry_has(
        "managed",
        &[
            "mbarrier.init.shared.b64",
            "fence.proxy.async.shared::cta",
            "bar.sync",
            "mbarrier.arrive.shared.b64",
            "mbarrier.test_wait.shared.b64",
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            "mbarrier.try_wait.shared::cta.b64",
            "mbarrier.inval.shared.b64",
        ],
    );
    built.assert_ptxas();
}

#[test]
fn cooperative_launch_is_recorded_in_the_manifest() {
    let project = TempProject::new("e2e-compat-coop", MANAGED);
    assert_success(&cargo_oxide(project.path(), &["build", "--arch", "sm_90"]), "build");
    let manifest = read_manifest("debug", &project.crate_name());
    let cooperative = |name: &str| {
        let k = manifest.kernels.iter().find(|k| k.name.ends_with(&format!("::{name}"))).expect(name);
        (k.cooperative, k.cluster_dims)
    };
    assert_eq!(cooperative("coop"), (true, None));
    // Before or after #[kernel], beside #[cluster_launch].
    assert_eq!(cooperative("coop_cluster"), (true, Some([2, 1, 1])));
    assert_eq!(cooperative("plain"), (false, None));
    assert_eq!(cooperative("managed"), (false, None));
}
