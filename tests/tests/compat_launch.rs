//! NVIDIA cuda-oxide's launch macro spellings (no GPU needed): `cuda_launch!` and
//! `cuda_launch_async!` of a generic kernel whose type arguments include `_`
//! (`map::<f32, _>`), inferred from the closure argument as in a call; the build compiles that
//! instance. A path without `_` keeps its exact instance.
use oxide_tests::*;

const SRC: &str = r#"
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};
use cuda_host::{cuda_launch, cuda_launch_async, load_kernel_module};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn map<T: Copy, F: Fn(T) -> T + Copy>(f: F, input: &[T], mut out: DisjointSlice<T>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = f(input[i]);
        }
    }

    #[kernel]
    pub fn offset<F: Fn(u32) -> u32 + Copy, const K: u32>(f: F, input: &[u32], mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = f(input[i]) + K;
        }
    }
}

fn host(ctx: &std::sync::Arc<CudaContext>) -> Result<(), cuda_core::DriverError> {
    use kernels::*;
    let stream = ctx.default_stream();
    let module = load_kernel_module(ctx, "e2e_compat_launch")?;
    let input = DeviceBuffer::from_host(&stream, &[1.0f32; 64])?;
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, 64)?;
    let factor = 2.5f32;
    cuda_launch! {
        kernel: map::<f32, _>,
        stream: stream,
        module: module,
        config: LaunchConfig::for_num_elems(64),
        args: [move |x: f32| x * factor, slice(input), slice_mut(out)]
    }?;
    let words = DeviceBuffer::from_host(&stream, &[1u32; 64])?;
    let mut words_out = DeviceBuffer::<u32>::zeroed(&stream, 64)?;
    // SAFETY: the buffers outlive the operation (it is synchronised at once).
    unsafe {
        cuda_launch_async! {
            kernel: kernels::offset::<_, 4>,
            module: module,
            config: LaunchConfig::for_num_elems(64),
            args: [move |x: u32| x * 3, slice(words), slice_mut(words_out)]
        }
    }
    .sync_on(&stream)?;
    // No `_`: the exact instance, with a scalar passed for a closure's place as before.
    cuda_launch! {
        kernel: kernels::map::<f32, fn(f32) -> f32>,
        stream: stream,
        module: module,
        config: LaunchConfig::for_num_elems(64),
        args: [(|x: f32| x + 1.0) as fn(f32) -> f32, slice(input), slice_mut(out)]
    }
}

fn main() {
    // Never run here: `host` is compiled (with its kernel instances), not executed.
    if std::env::var_os("E2E_NEVER_SET").is_some() {
        host(&CudaContext::new(0).unwrap()).unwrap();
    }
}
"#;

#[test]
fn underscore_type_arguments_are_inferred_from_the_arguments() {
    let project = TempProject::new("e2e-compat-launch", SRC);
    std::fs::write(
        project.path().join("Cargo.toml"),
        std::fs::read_to_string(project.path().join("Cargo.toml"))
            .expect("Cargo.toml")
            .replace("cuda-host = {", "cuda-host = { features = [\"async\"],"),
    )
    .expect("write Cargo.toml");
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_80"]);
    assert_success(&out, "cuda_launch! with `_` type arguments");
    let manifest = read_manifest("debug", &project.crate_name());
    let names: Vec<&str> = manifest.kernels.iter().map(|k| k.name.as_str()).collect();
    let has = |prefix: &str| names.iter().any(|n| n.starts_with(prefix));
    assert!(has("e2e_compat_launch::kernels::map::<f32, {closure@src/main.rs:"), "{names:?}");
    assert!(has("e2e_compat_launch::kernels::offset::<{closure@src/main.rs:"), "{names:?}");
    assert!(names.contains(&"e2e_compat_launch::kernels::map::<f32, fn(f32) -> f32>"), "{names:?}");
}
