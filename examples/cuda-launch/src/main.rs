//! The `cuda_launch!` example of docs/book/src/launching.md, its snippet unchanged inside the
//! smallest `main`: it sideloads the device code of crate `vecadd` (examples/vecadd) from the
//! build artifacts, so build that example first (`cargo oxide build` there), or point
//! `CUDA_OXIDE_ARTIFACT_DIR` at a directory holding `vecadd/manifest.json`.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let a = DeviceBuffer::from_host(&stream, &[1.0f32; 1024]).unwrap();
    let b = DeviceBuffer::from_host(&stream, &[2.0f32; 1024]).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed(&stream, 1024).unwrap();

    use cuda_host::{cuda_launch, load_kernel_module};

    let module = load_kernel_module(&ctx, "vecadd").unwrap();

    cuda_launch! {
        kernel: vecadd,
        stream: stream,
        module: module,
        config: LaunchConfig::for_num_elems(1024),
        args: [slice(a), slice(b), slice_mut(c)]
    }
    .expect("Kernel launch failed");

    let result = c.to_host_vec(&stream).unwrap();
    assert!(result.iter().all(|x| *x == 3.0), "wrong result: {:?}", &result[..8]);
    println!("cuda-launch: 1024 elements of 1 + 2 = {} (module vecadd, {:?})", result[0], module.payload());
}
