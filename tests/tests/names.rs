//! Generic kernel instances are named for people — `combine::<f32, Add>`, type arguments with
//! their paths trimmed — in the manifest, the build summary, `cargo oxide inspect` and device-code
//! errors, never by the hashed PTX entry (`combine_a519…`).
use oxide_tests::*;

const GENERIC: &str = r#"
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

pub mod ops {
    pub trait Op<T>: Copy {
        fn apply(self, a: T, b: T) -> T;
    }
    #[derive(Clone, Copy)]
    pub struct Add;
    impl Op<f32> for Add {
        fn apply(self, a: f32, b: f32) -> f32 { a + b }
    }
}

#[cuda_module]
mod kernels {
    use super::*;
    use super::ops::Op;

    #[kernel]
    pub fn combine<T: Copy, O: Op<T>>(a: &[T], b: &[T], op: O, mut out: DisjointSlice<T>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = op.apply(a[i], b[i]);
        }
    }
}

fn main() -> Result<(), cuda_core::DriverError> {
    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx)?;
    let a = DeviceBuffer::from_host(&stream, &[1.0f32; 8])?;
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, 8)?;
    module.combine(&stream, LaunchConfig::for_num_elems(8), &a, &a, ops::Add, &mut out)?;
    Ok(())
}
"#;

#[test]
fn summary_inspect_and_manifest_name_the_instance_readably() {
    let project = TempProject::new("names-generic", GENERIC);
    remove_artifacts("dev", &project.crate_name());
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_90"]);
    assert_success(&out, "cargo oxide build");
    let summary = stderr(&out);

    let manifest = read_manifest("dev", &project.crate_name());
    let kernel = manifest.kernels.iter().find(|k| k.name.contains("combine")).expect("the combine instance");
    assert_eq!(kernel.display_name, "combine::<f32, Add>");
    // The PTX entry of an instance is hashed; people never need to read it.
    assert_ne!(kernel.entry, "combine");
    assert!(summary.contains("names_generic::kernels::combine::<f32, Add>(a: slice"), "summary:\n{summary}");
    assert!(!summary.contains(&kernel.entry), "the summary shows the hashed entry:\n{summary}");

    let out = cargo_oxide(project.path(), &["inspect", &project.crate_name()]);
    assert_success(&out, "cargo oxide inspect");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("kernel names_generic::kernels::combine::<f32, Add>("), "inspect:\n{text}");
}

const GENERIC_ERROR: &str = r#"
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

pub mod units {
    #[derive(Clone, Copy)]
    pub struct Meters;
}

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn boxed<U: Copy>(_unit: U, mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let b = Box::new(idx.get() as u32);
        if let Some(o) = out.get_mut(idx) {
            *o = *b;
        }
    }
}

fn main() -> Result<(), cuda_core::DriverError> {
    let ctx = cuda_core::CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx)?;
    let mut out = cuda_core::DeviceBuffer::<u32>::zeroed(&stream, 8)?;
    module.boxed(&stream, cuda_core::LaunchConfig::for_num_elems(8), units::Meters, &mut out)?;
    Ok(())
}
"#;

#[test]
fn device_code_errors_name_the_instance_readably() {
    let project = TempProject::new("names-error", GENERIC_ERROR);
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_90"]);
    assert!(!out.status.success(), "a Box in a kernel must not build");
    let err = stderr(&out);
    assert!(err.contains("heap allocation is not supported in device code"), "{err}");
    assert!(err.contains("in device code of `kernels::boxed::<Meters>`"), "{err}");
}
