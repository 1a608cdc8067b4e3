//! GPU tests of the host runtime with hand-written PTX: buffers, bundles, launches, errors,
//! clusters, sideloading and `cuda_launch!`. Run on a GPU machine with `--ignored`.

use std::sync::Arc;

use cuda_core::oxide_contract::bundle::{Payload, write_bundle};
use cuda_core::oxide_contract::manifest::{
    KernelInfo, LaunchBounds, Manifest, ParamInfo, ParamKind, PayloadInfo, PayloadKind,
};
use cuda_core::oxide_contract::{arch::Arch, sha256_hex};
use cuda_core::{
    CudaContext, CudaEvent, DeviceBuffer, DriverError, KernelParams, LaunchConfig, Module, launch_with, load_bundle,
};
use cuda_host::{cuda_launch, load_kernel_module};

const KERNELS_PTX: &str = r#"
.version 7.0
.target sm_80
.address_size 64

.visible .entry vecadd(.param .u64 a, .param .u64 a_len, .param .u64 b, .param .u64 b_len,
                       .param .u64 c, .param .u64 c_len)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<12>;
    .reg .f32 %f<4>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    ld.param.u64 %rd3, [c];
    ld.param.u64 %rd4, [c_len];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    cvta.to.global.u64 %rd3, %rd3;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd5, %r1, %r2;
    cvt.u64.u32 %rd6, %r3;
    add.s64 %rd5, %rd5, %rd6;
    setp.ge.u64 %p1, %rd5, %rd4;
    @%p1 bra DONE;
    shl.b64 %rd7, %rd5, 2;
    add.s64 %rd8, %rd1, %rd7;
    add.s64 %rd9, %rd2, %rd7;
    add.s64 %rd10, %rd3, %rd7;
    ld.global.f32 %f1, [%rd8];
    ld.global.f32 %f2, [%rd9];
    add.f32 %f3, %f1, %f2;
    st.global.f32 [%rd10], %f3;
DONE:
    ret;
}

.visible .entry scale(.param .f32 k, .param .u64 d, .param .u64 d_len)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    .reg .f32 %f<4>;
    ld.param.f32 %f1, [k];
    ld.param.u64 %rd1, [d];
    ld.param.u64 %rd2, [d_len];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd3, %r1, %r2;
    cvt.u64.u32 %rd4, %r3;
    add.s64 %rd3, %rd3, %rd4;
    setp.ge.u64 %p1, %rd3, %rd2;
    @%p1 bra DONE;
    shl.b64 %rd5, %rd3, 2;
    add.s64 %rd6, %rd1, %rd5;
    ld.global.f32 %f2, [%rd6];
    mul.f32 %f3, %f2, %f1;
    st.global.f32 [%rd6], %f3;
DONE:
    ret;
}
"#;

const CLUSTER_PTX: &str = r#"
.version 7.8
.target sm_90
.address_size 64

.visible .entry cluster_rank(.param .u64 out, .param .u64 out_len)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %cluster_ctarank;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    ret;
}
"#;

fn slice(name: &str, kind: ParamKind) -> ParamInfo {
    ParamInfo { name: name.into(), ty: "[f32]".into(), kind, size: 4, align: 4 }
}

fn manifest() -> Manifest {
    let mut m = Manifest::new("gputest");
    m.kernels.push(KernelInfo {
        name: "gputest::vecadd".into(),
        display_name: String::new(),
        key: 1,
        entry: "vecadd".into(),
        params: vec![slice("a", ParamKind::Slice), slice("b", ParamKind::Slice), slice("c", ParamKind::DisjointSlice)],
        launch_bounds: Some(LaunchBounds { max_threads: 512, min_blocks: None }),
        cluster_dims: None,
        cooperative: false,
        launch_contract: None,
        fast: None,
    });
    m.kernels.push(KernelInfo {
        name: "gputest::scale".into(),
        display_name: String::new(),
        key: 2,
        entry: "scale".into(),
        params: vec![
            ParamInfo { name: "k".into(), ty: "f32".into(), kind: ParamKind::Scalar, size: 4, align: 4 },
            slice("d", ParamKind::SliceMut),
        ],
        launch_bounds: None,
        cluster_dims: None,
        cooperative: false,
        launch_contract: None,
        fast: None,
    });
    m.payloads.push(PayloadInfo {
        arch: "sm_80".into(),
        kind: PayloadKind::Ptx,
        file: "gputest.sm_80.ptx".into(),
        sha256: sha256_hex(KERNELS_PTX.as_bytes()),
        bytes: KERNELS_PTX.len() as u64,
        cuda_release: None,
    });
    m
}

fn bundle_bytes() -> Vec<u8> {
    let sm80 = Arch::parse("sm_80").unwrap().code();
    write_bundle(&manifest(), &[Payload { kind: PayloadKind::Ptx, sm: sm80, bytes: KERNELS_PTX.as_bytes() }])
}

/// Deterministic pseudo-random floats in [-1, 1).
fn random(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn ctx() -> Arc<CudaContext> {
    CudaContext::new(0).expect("a CUDA GPU")
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_info_and_bad_ordinal() {
    let ctx = ctx();
    let (major, _) = ctx.capability();
    assert!(major >= 7 && ctx.sm_count() > 0 && ctx.total_memory() > 0 && !ctx.name().is_empty(), "{ctx:?}");
    let count = CudaContext::device_count().unwrap();
    let err = CudaContext::new(count + 3).unwrap_err();
    assert!(matches!(err, DriverError::NoDevice { count: c, .. } if c == count), "{err}");
    println!("{ctx:?}: {err}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn buffers_round_trip_and_check_lengths() {
    let ctx = ctx();
    let stream = ctx.new_stream().unwrap();
    let data = random(1000, 1);
    let a = DeviceBuffer::from_host(&stream, &data).unwrap();
    assert_eq!(a.len(), 1000);
    assert_eq!(a.to_host_vec(&stream).unwrap(), data);
    let mut z = DeviceBuffer::<f32>::zeroed(&stream, 1000).unwrap();
    assert!(z.to_host_vec(&stream).unwrap().iter().all(|x| *x == 0.0));
    z.copy_from(&stream, &a).unwrap();
    let mut out = vec![0.0; 1000];
    z.copy_to_host(&stream, &mut out).unwrap();
    assert_eq!(out, data);
    let err = z.copy_from_host(&stream, &data[..10]).unwrap_err();
    assert!(matches!(err, DriverError::LengthMismatch { expected: 1000, found: 10, .. }), "{err}");
    let empty = DeviceBuffer::<u64>::from_host(&stream, &[]).unwrap();
    assert!(empty.is_empty() && empty.to_host_vec(&stream).unwrap().is_empty());
    let tuples = DeviceBuffer::from_host(&stream, &[(1u8, 2.5f64), (3, 4.5)]).unwrap();
    assert_eq!(tuples.to_host_vec(&stream).unwrap(), [(1u8, 2.5f64), (3, 4.5)]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn vecadd_from_bundle_matches_cpu() {
    let ctx = ctx();
    let stream = ctx.default_stream();
    let bytes = bundle_bytes();
    let module = load_bundle(&ctx, &bytes).unwrap();
    assert_eq!(module.payload(), (PayloadKind::Ptx, "sm_80"));
    let n = 1000;
    let (ha, hb) = (random(n, 2), random(n, 3));
    let a = DeviceBuffer::from_host(&stream, &ha).unwrap();
    let b = DeviceBuffer::from_host(&stream, &hb).unwrap();
    let mut c = DeviceBuffer::from_host(&stream, &vec![f32::NAN; n]).unwrap();
    let f = module.function("vecadd").unwrap();
    let mut p = KernelParams::new();
    p.push_slice(&a).push_slice(&b).push_slice_mut(&mut c);
    unsafe { launch_with(&f, &stream, &LaunchConfig::for_num_elems(n as u32), None, &mut p) }.unwrap();
    let got = c.to_host_vec(&stream).unwrap();
    let want: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x + y).collect();
    assert_eq!(got, want);
    assert_eq!(module.manifest().entries(), ["vecadd", "scale"]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn launch_errors_are_clear() {
    let ctx = ctx();
    let stream = ctx.default_stream();
    let bytes = bundle_bytes();
    let module = load_bundle(&ctx, &bytes).unwrap();
    let err = module.function("vecad").unwrap_err().to_string();
    assert!(err.contains("`vecad`") && err.contains("(it has: vecadd, scale)"), "{err}");

    let a = DeviceBuffer::<f32>::zeroed(&stream, 256).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed(&stream, 256).unwrap();
    let f = module.function("vecadd").unwrap();
    let mut p = KernelParams::new();
    p.push_slice(&a).push_slice_mut(&mut c);
    let err = unsafe { launch_with(&f, &stream, &LaunchConfig::for_num_elems(256), None, &mut p) }.unwrap_err();
    assert!(matches!(err, DriverError::ArgumentMismatch { .. }), "{err}");
    assert!(err.to_string().contains("takes 3 arguments (a, b, c), the launch passes 2"), "{err}");

    let k = 2.0f64;
    let mut p = KernelParams::new();
    p.push_value(&k).push_slice_mut(&mut c);
    let g = module.function("scale").unwrap();
    let err = unsafe { launch_with(&g, &stream, &LaunchConfig::for_num_elems(256), None, &mut p) }.unwrap_err();
    assert!(err.to_string().contains("is 4 bytes on the device, the value passed is 8 bytes"), "{err}");

    let mut p = KernelParams::new();
    p.push_slice(&a).push_slice(&a).push_slice_mut(&mut c);
    let wide = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
    let err = unsafe { launch_with(&f, &stream, &wide, None, &mut p) }.unwrap_err();
    assert!(err.to_string().contains("#[launch_bounds(512)]"), "{err}");
    let zero = LaunchConfig { grid_dim: (0, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
    let err = unsafe { launch_with(&f, &stream, &zero, None, &mut p) }.unwrap_err();
    assert!(err.to_string().contains("grid_dim.x is 0"), "{err}");
    stream.synchronize().unwrap();
    println!("errors look like:\n{err}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn scalar_kernel_without_manifest_and_events() {
    let ctx = ctx();
    let stream = ctx.new_stream().unwrap();
    let module = Module::from_ptx(&ctx, KERNELS_PTX).unwrap();
    let host = random(4096, 4);
    let mut d = DeviceBuffer::from_host(&stream, &host).unwrap();
    let (start, end) = (CudaEvent::new(&ctx).unwrap(), CudaEvent::new(&ctx).unwrap());
    start.record(&stream).unwrap();
    let k = 3.0f32;
    let mut p = KernelParams::new();
    p.push_value(&k).push_slice_mut(&mut d);
    let f = module.function("scale").unwrap();
    unsafe { launch_with(&f, &stream, &LaunchConfig::for_num_elems(4096), None, &mut p) }.unwrap();
    end.record(&stream).unwrap();
    assert!(start.elapsed_ms(&end).unwrap() >= 0.0);
    let want: Vec<f32> = host.iter().map(|x| x * 3.0).collect();
    assert_eq!(d.to_host_vec(&stream).unwrap(), want);
    let err = module.function("nope").unwrap_err();
    assert!(matches!(err, DriverError::EntryNotFound { known: None, .. }), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn works_from_other_threads() {
    let ctx = ctx();
    let module = Arc::new(load_bundle(&ctx, &bundle_bytes()).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let (ctx, module) = (Arc::clone(&ctx), Arc::clone(&module));
            std::thread::spawn(move || {
                let stream = ctx.new_stream().unwrap();
                let host = random(777, 10 + t);
                let mut d = DeviceBuffer::from_host(&stream, &host).unwrap();
                let k = t as f32;
                cuda_launch! {
                    kernel: scale,
                    stream: stream,
                    module: module,
                    config: LaunchConfig::for_num_elems(777),
                    args: [k, slice_mut(d)]
                }
                .unwrap();
                let want: Vec<f32> = host.iter().map(|x| x * k).collect();
                assert_eq!(d.to_host_vec(&stream).unwrap(), want);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cluster_launch_gives_ranks() {
    let ctx = ctx();
    if ctx.capability().0 < 9 {
        return;
    }
    let stream = ctx.default_stream();
    let module = Module::from_ptx(&ctx, CLUSTER_PTX).unwrap();
    let mut out = DeviceBuffer::from_host(&stream, &[u32::MAX; 16]).unwrap();
    let cfg = LaunchConfig { grid_dim: (16, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
    cuda_launch! {
        kernel: cluster_rank,
        stream: stream,
        module: module,
        config: cfg,
        cluster_dim: (4, 1, 1),
        args: [slice_mut(out)]
    }
    .expect("Cluster launch failed");
    let ranks = out.to_host_vec(&stream).unwrap();
    assert_eq!(ranks, (0..16).map(|b| b % 4).collect::<Vec<u32>>());
    // A non-portable cluster of 16 blocks opts in automatically.
    cuda_launch! {
        kernel: cluster_rank,
        stream: stream,
        module: module,
        config: cfg,
        cluster_dim: (16, 1, 1),
        args: [slice_mut(out)]
    }
    .expect("16-block cluster launch failed");
    assert_eq!(out.to_host_vec(&stream).unwrap(), (0..16).collect::<Vec<u32>>());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sideloaded_module_with_cuda_launch() {
    let ctx = ctx();
    let stream = ctx.default_stream();
    let root = std::env::temp_dir().join(format!("oxide-gpu-sideload-{}", std::process::id()));
    std::fs::create_dir_all(root.join("gputest")).unwrap();
    std::fs::write(root.join("gputest/manifest.json"), manifest().to_json_pretty()).unwrap();
    std::fs::write(root.join("gputest/gputest.sm_80.ptx"), KERNELS_PTX).unwrap();
    unsafe { std::env::set_var(cuda_host::ARTIFACT_DIR_ENV, &root) };
    let err = load_kernel_module(&ctx, "vecadd").unwrap_err().to_string();
    assert!(err.contains("available modules: gputest"), "{err}");
    let module = load_kernel_module(&ctx, "gputest").unwrap();

    let n = 1024;
    let (ha, hb) = (random(n, 5), random(n, 6));
    let a = DeviceBuffer::from_host(&stream, &ha).unwrap();
    let b = DeviceBuffer::from_host(&stream, &hb).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();
    cuda_launch! {
        kernel: vecadd,
        stream: stream,
        module: module,
        config: LaunchConfig::for_num_elems(1024),
        args: [slice(a), slice(b), slice_mut(c)]
    }
    .expect("Kernel launch failed");
    let want: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x + y).collect();
    assert_eq!(c.to_host_vec(&stream).unwrap(), want);
    let err = cuda_launch! {
        kernel: vecadd,
        stream: stream,
        module: module,
        config: LaunchConfig::for_num_elems(1024),
        args: [slice(a), 1.0f32, slice_mut(c)]
    }
    .unwrap_err();
    assert!(err.to_string().contains("argument 1 (`b: [f32]`) is a slice"), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}
