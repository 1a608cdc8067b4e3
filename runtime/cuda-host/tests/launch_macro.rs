//! `cuda_launch!` accepts every documented argument form (compile-only: no GPU needed).

use std::sync::Arc;

use cuda_core::{CudaContext, CudaStream, DeviceBuffer, DriverError, LaunchConfig};
use cuda_host::{LoadedBundle, cuda_launch, load_kernel_module};

#[derive(Clone, Copy)]
struct Params {
    _scale: f32,
    _offset: u32,
}

#[allow(dead_code)]
fn seed_example(ctx: &Arc<CudaContext>) -> Result<(), DriverError> {
    let stream = ctx.default_stream();
    let a = DeviceBuffer::from_host(&stream, &[1.0f32; 1024])?;
    let b = DeviceBuffer::from_host(&stream, &[2.0f32; 1024])?;
    let mut c = DeviceBuffer::<f32>::zeroed(&stream, 1024)?;
    let module = load_kernel_module(ctx, "vecadd").unwrap();

    cuda_launch! {
        kernel: vecadd,
        stream: stream,
        module: module,
        config: LaunchConfig::for_num_elems(1024),
        args: [slice(a), slice(b), slice_mut(c)]
    }
    .expect("Kernel launch failed");

    // Module, stream and buffers are still usable afterwards.
    let _ = c.to_host_vec(&stream)?;
    let _ = module.manifest();
    Ok(())
}

/// Stands for a generic kernel: `cuda_launch!` with type arguments names the kernel itself (to
/// find the instance by its key), so it must be in scope; its arguments are checked against the
/// kernel's parameters (slices against any slice parameter), and `_` is inferred from them.
#[allow(dead_code, clippy::too_many_arguments)]
fn map<T, U, F: Fn(f32) -> f32>(_: F, _: u32, _: Params, _: &[T], _: &[T], _: &mut [U], _: (), _: *const f32) {}

#[allow(dead_code)]
fn other_forms(
    module: &LoadedBundle,
    stream: &Arc<CudaStream>,
    out: &mut DeviceBuffer<u32>,
    input: &DeviceBuffer<f32>,
) {
    let k = 3.0f32;
    let n = 17u32;
    let config = LaunchConfig { grid_dim: (4, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
    let r: Result<(), DriverError> = cuda_launch! {
        kernel: cluster_kernel,
        stream: &stream,
        module: &module,
        config: config,
        cluster_dim: (4, 1, 1),
        args: [slice_mut(out)]
    };
    let _ = r;
    let _ = cuda_launch! {
        kernel: map::<f32, u32, _>,
        stream: **stream,
        module: module,
        config: config,
        args: [move |x: f32| x * k, n, Params { _scale: k, _offset: 1 }, slice(input), slice(&input), slice_mut(*out), (), std::ptr::null::<f32>()],
    };
}

#[test]
fn forms_compile() {}
