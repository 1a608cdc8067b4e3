//! GPU test of kernel identity and linking: kernels named `op` in two modules of this binary, in
//! the library of this package and in a library dependency each run their own code; instances of
//! the dependency's generic `map`, launched from a generic helper whose closure type is not
//! `'static`, run the closure they were given. Random inputs, outputs poisoned first, compared
//! with the CPU.
//! `--cpu-only`: no GPU; checks that every kernel instance the launches name is in the device code
//! linked into this binary (the build test runs this).
use cuda_core::oxide_contract::naming::kernel_key;
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare};

#[cuda_module]
mod add_kernels {
    use super::*;

    /// `out[i] = a[i] + a[i]`.
    #[kernel]
    pub fn op(a: &[u32], mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = a[i].wrapping_add(a[i]);
        }
    }

    /// `out[i] = a[i] + V`: one instance per value of `V`.
    #[kernel]
    pub fn add_const<const V: u32>(a: &[u32], mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = a[i].wrapping_add(V);
        }
    }
}

/// A value only known through an associated constant, as a const argument.
struct Eight;

impl Eight {
    const VALUE: u32 = 8;
}

// NVIDIA cuda-oxide's programs import the macro from cuda_host.
#[cuda_host::cuda_module]
mod mul_kernels {
    use super::*;

    /// `out[i] = a[i] * a[i]`.
    #[kernel]
    pub fn op(a: &[u32], mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = a[i].wrapping_mul(a[i]);
        }
    }
}

const N: usize = 100_003;

/// Launches the dependency's generic `map` with `f` from a generic helper: `F` need not be
/// `'static` (the helper cannot promise it, and no `'static` bound is asked for).
fn launch_map<F: Fn(u32) -> u32 + Copy>(
    module: &identity_kernels::kernels::Module,
    stream: &cuda_core::CudaStream,
    f: F,
    a: &DeviceBuffer<u32>,
    out: &mut DeviceBuffer<u32>,
) -> Result<(), cuda_core::DriverError> {
    module.map(stream, LaunchConfig::for_num_elems(a.len() as u32), f, a, out)
}

/// The key of `map::<u32, F>`, for the registry check.
fn map_key<F: Fn(u32) -> u32 + Copy>(_: &F) -> u64 {
    kernel_key(&identity_kernels::kernels::map::<u32, F>)
}

fn main() {
    let mut report = Report::new("identity");
    // The closures capture by value: the GPU cannot read the host's locals.
    let offset = 1234u32;
    let table = [3u32, 1, 4, 1, 5, 9, 2, 6];
    let add_offset = move |x: u32| x.wrapping_add(offset);
    let look_up = move |x: u32| table[(x % 8) as usize].wrapping_mul(x);

    if std::env::args().any(|a| a == "--cpu-only") {
        let kernels = [
            ("add_kernels::op", kernel_key(&add_kernels::op)),
            ("mul_kernels::op", kernel_key(&mul_kernels::op)),
            ("gpu_identity::package_kernels::op", kernel_key(&gpu_identity::package_kernels::op)),
            ("identity_kernels::kernels::op", kernel_key(&identity_kernels::kernels::op)),
            ("map::<u32, add_offset>", map_key(&add_offset)),
            ("map::<u32, look_up>", map_key(&look_up)),
            ("add_const::<4>", kernel_key(&add_kernels::add_const::<4>)),
            ("add_const::<8>", kernel_key(&add_kernels::add_const::<{ Eight::VALUE }>)),
        ];
        report.check("const instances have their own entries", || {
            let (four, eight) = (add_kernels::add_const_ptx_name::<4>(), add_kernels::add_const_ptx_name::<8>());
            let manifests = ck(cuda_core::embedded_manifests(), "read the embedded bundles")?;
            let entries: Vec<String> = manifests.iter().flat_map(|m| m.entries()).collect();
            match (four == eight, entries.iter().any(|e| e == four), entries.iter().any(|e| e == eight)) {
                (false, true, true) => Ok(()),
                _ => Err(format!("add_const entries {four} / {eight}; the binary has {entries:?}")),
            }
        });
        report.check("every kernel is linked into the binary", || {
            let manifests = ck(cuda_core::embedded_manifests(), "read the embedded bundles")?;
            let missing: Vec<&str> = kernels
                .iter()
                .filter(|(_, key)| !manifests.iter().any(|m| m.kernel_by_key(*key).is_some()))
                .map(|(name, _)| *name)
                .collect();
            let keys: std::collections::HashSet<u64> = kernels.iter().map(|(_, k)| *k).collect();
            if keys.len() != kernels.len() {
                return Err(format!("two kernels share a key: {kernels:?}"));
            }
            if missing.is_empty() { Ok(()) } else { Err(format!("not linked: {missing:?}")) }
        });
        report.finish()
    }

    let mut rng = Lcg::from_env_or_clock();
    let (ctx, stream, add) = report.load(add_kernels::load);
    let mul = report.setup(|| ck(mul_kernels::load(&ctx), "mul_kernels::load"));
    let package = report.setup(|| ck(gpu_identity::package_kernels::load(&ctx), "package_kernels::load"));
    let dependency = report.setup(|| ck(identity_kernels::kernels::load(&ctx), "identity_kernels::kernels::load"));
    let a: Vec<u32> = (0..N).map(|_| rng.next_u32()).collect();
    let a_dev = report.setup(|| ck(DeviceBuffer::from_host(&stream, &a), "copy a to the device"));
    let config = LaunchConfig::for_num_elems(N as u32);

    // Each `op` must run its own body: same name, different modules and crates.
    type Launch<'m> = Box<dyn Fn(&mut DeviceBuffer<u32>) -> Result<(), cuda_core::DriverError> + 'm>;
    let ops: Vec<(&str, Launch<'_>, fn(u32) -> u32)> = vec![
        ("add_kernels::op", Box::new(|o| add.op(&stream, config, &a_dev, o)), |x| x.wrapping_add(x)),
        ("mul_kernels::op", Box::new(|o| mul.op(&stream, config, &a_dev, o)), |x| x.wrapping_mul(x)),
        ("package library op", Box::new(|o| package.op(&stream, config, &a_dev, o)), |x| x ^ 0x5a5a_5a5a),
        ("dependency op", Box::new(|o| dependency.op(&stream, config, &a_dev, o)), |x| x.wrapping_sub(7)),
    ];
    for (name, launch, cpu) in &ops {
        report.check(name, || {
            let mut out = ck(DeviceBuffer::from_host(&stream, &vec![0xdead_beefu32; N]), "poison out")?;
            ck(launch(&mut out), "launch")?;
            ck(stream.synchronize(), "synchronize")?;
            let want: Vec<u32> = a.iter().map(|&x| cpu(x)).collect();
            compare(name, &ck(out.to_host_vec(&stream), "copy out back")?, &want, |x, y| x == y)
        });
    }

    // Instances of a const-generic kernel, one per value.
    for (name, launch, v) in [
        (
            "add_const::<4>",
            &(|o: &mut DeviceBuffer<u32>| add.add_const::<4>(&stream, config, &a_dev, o)) as &dyn Fn(&mut _) -> _,
            4u32,
        ),
        (
            "add_const::<8>",
            &|o: &mut DeviceBuffer<u32>| add.add_const::<{ Eight::VALUE }>(&stream, config, &a_dev, o),
            8,
        ),
    ] {
        report.check(name, || {
            let mut out = ck(DeviceBuffer::from_host(&stream, &vec![0xdead_beefu32; N]), "poison out")?;
            ck(launch(&mut out), "launch")?;
            ck(stream.synchronize(), "synchronize")?;
            let want: Vec<u32> = a.iter().map(|&x| x.wrapping_add(v)).collect();
            compare(name, &ck(out.to_host_vec(&stream), "copy out back")?, &want, |x, y| x == y)
        });
    }

    // Two instances of the dependency's generic kernel, with closures that borrow locals.
    for (name, f) in [("map add_offset", &add_offset as &dyn Fn(u32) -> u32), ("map look_up", &look_up)] {
        report.check(name, || {
            let mut out = ck(DeviceBuffer::from_host(&stream, &vec![0xdead_beefu32; N]), "poison out")?;
            if name == "map add_offset" {
                ck(launch_map(&dependency, &stream, add_offset, &a_dev, &mut out), "launch map")?;
            } else {
                ck(launch_map(&dependency, &stream, look_up, &a_dev, &mut out), "launch map")?;
            }
            ck(stream.synchronize(), "synchronize")?;
            let want: Vec<u32> = a.iter().map(|&x| f(x)).collect();
            compare(name, &ck(out.to_host_vec(&stream), "copy out back")?, &want, |x, y| x == y)
        });
    }

    // `from_module`: kernels bound in a module the program holds itself (NVIDIA cuda-oxide's
    // `kernels::from_module`), found in it by key: a plain kernel in the dependency's module, an
    // instance of its generic `map` in this binary's module (the crate that instantiated it).
    let module_of = |key: u64| {
        let bundles = dependency.kernels().loaded_bundles();
        let found = bundles.iter().find(|b| b.manifest().kernel_by_key(key).is_some()).map(|b| b.module().clone());
        found.ok_or_else(|| format!("no loaded bundle holds kernel {key:016x}"))
    };
    report.check("from_module op", || {
        let bound: identity_kernels::kernels::LoadedModule = ck(
            identity_kernels::kernels::from_module(module_of(kernel_key(&identity_kernels::kernels::op))?),
            "from_module",
        )?;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![0xdead_beefu32; N]), "poison out")?;
        ck(bound.op(&stream, config, &a_dev, &mut out), "launch op")?;
        ck(stream.synchronize(), "synchronize")?;
        let want: Vec<u32> = a.iter().map(|&x| x.wrapping_sub(7)).collect();
        compare("from_module op", &ck(out.to_host_vec(&stream), "copy out back")?, &want, |x, y| x == y)
    });
    report.check("from_module map", || {
        let bound = ck(identity_kernels::kernels::from_module(module_of(map_key(&add_offset))?), "from_module")?;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![0xdead_beefu32; N]), "poison out")?;
        ck(launch_map(&bound, &stream, add_offset, &a_dev, &mut out), "launch map")?;
        ck(stream.synchronize(), "synchronize")?;
        let want: Vec<u32> = a.iter().map(|&x| add_offset(x)).collect();
        compare("from_module map", &ck(out.to_host_vec(&stream), "copy out back")?, &want, |x, y| x == y)
    });
    report.finish()
}
