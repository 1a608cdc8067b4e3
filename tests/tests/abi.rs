//! The kernel ABI's two classifications agree for every parameter kind (contract §4): `#[kernel]`
//! reads each parameter's syntax and the launch methods push what it read; the backend classifies
//! the type and builds the PTX entry, and checks the macro's reading against its own (a mismatch
//! is a compile error, see `ui/param_kind_hidden_by_alias.rs`). One crate with a kernel of every
//! kind must build, and its manifest must record the kinds the launch methods push.
use oxide_contract::abi::{LaunchArg, ParamKind};
use oxide_tests::*;

const EVERY_KIND: &str = r#"
use cuda_device::{DisjointSlice, DeviceCopy, cuda_module, kernel, thread};

#[derive(Clone, Copy, DeviceCopy)]
pub struct Pair { pub a: u32, pub b: f64 }

#[derive(Clone, Copy)]
pub struct Lookup<'a> { pub values: &'a [u32; 4] }

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn every_kind(
        slice: &[f32],
        slice_mut: &mut [u16],
        disjoint: DisjointSlice<u64>,
        full_path: cuda_device::DisjointSlice<i8>,
        int: i32,
        float: f64,
        flag: bool,
        letter: char,
        wide: u128,
        raw: *const u8,
        raw_mut: *mut f32,
        pair: Pair,
        tuple: (u8, u32),
        array: [u16; 3],
        option: Option<u32>,
        unit: (),
        empty: [u32; 0],
    ) {
        let _ = (slice, slice_mut, disjoint, full_path, int, float, flag, letter, wide, raw, raw_mut);
        let _ = (pair, tuple, array, option, unit, empty, thread::index_1d());
    }

    #[kernel]
    pub fn generic_kinds<T: Copy, F: Fn(T) -> T>(f: F, input: &[T], out: DisjointSlice<T>, scale: T) {
        let _ = (f, input, out, scale);
    }

    /// Takes a struct holding a reference: a host address, which the build warns about.
    #[kernel]
    pub fn host_ref(table: Lookup<'_>, out: &mut [u32]) {
        out[0] = table.values[0];
    }
}

fn main() -> Result<(), cuda_core::DriverError> {
    // Never runs here (no GPU); names the generic instance so that it is compiled.
    if std::env::var_os("ABI_TEST_LAUNCH").is_some() {
        let ctx = cuda_core::CudaContext::new(0)?;
        let stream = ctx.default_stream();
        let module = kernels::load(&ctx)?;
        let input = cuda_core::DeviceBuffer::from_host(&stream, &[1.0f32; 4])?;
        let mut out = cuda_core::DeviceBuffer::<f32>::zeroed(&stream, 4)?;
        let cfg = cuda_core::LaunchConfig::for_num_elems(4);
        module.generic_kinds(&stream, cfg, |x: f32| x * 2.0, &input, &mut out, 3.0f32)?;
    }
    Ok(())
}
"#;

#[test]
fn macro_and_backend_agree_on_every_parameter_kind() {
    let project = TempProject::new("abi-every-kind", EVERY_KIND);
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_90"]);
    assert_success(&out, "cargo oxide build of a kernel with every parameter kind");
    let warnings = stderr(&out);
    assert!(
        warnings
            .contains("kernel parameter `table` holds a reference (`&[u32; 4]`): the kernel would read host memory"),
        "no warning about the host reference:\n{warnings}"
    );
    let manifest = read_manifest("dev", &project.crate_name());
    let kernel = manifest.kernel("every_kind").expect("every_kind in the manifest");
    let kinds: Vec<(&str, ParamKind)> = kernel.params.iter().map(|p| (p.name.as_str(), p.kind)).collect();
    use ParamKind::*;
    let expected = [
        ("slice", Slice),
        ("slice_mut", SliceMut),
        ("disjoint", DisjointSlice),
        ("full_path", DisjointSlice),
        ("int", Scalar),
        ("float", Scalar),
        ("flag", Scalar),
        ("letter", Scalar),
        ("wide", Scalar),
        ("raw", Scalar),
        ("raw_mut", Scalar),
        ("pair", Byval),
        ("tuple", Byval),
        ("array", Byval),
        ("option", Byval),
        ("unit", Zst),
        ("empty", Zst),
    ];
    assert_eq!(kinds, expected);
    // What the launch methods push for these kinds (the macro's side of the agreement).
    let pushed: Vec<LaunchArg> = kernel.params.iter().map(|p| p.kind.launch_arg()).collect();
    assert_eq!(&pushed[..4], [LaunchArg::Buffer, LaunchArg::BufferMut, LaunchArg::BufferMut, LaunchArg::BufferMut]);
    assert!(pushed[4..].iter().all(|a| *a == LaunchArg::Value));
    assert_eq!(kernel.launch_slots(), 4 * 2 + 11);
    let generic = manifest.kernels.iter().find(|k| k.entry.starts_with("generic_kinds_")).expect("generic instance");
    let kinds: Vec<ParamKind> = generic.params.iter().map(|p| p.kind).collect();
    assert_eq!(kinds, [Zst, Slice, DisjointSlice, Scalar], "the closure captures nothing: zero-sized");
}
