//! GPU test: the host API under NVIDIA cuda-oxide's names (issue 10). Device code loaded from
//! files (PTX, cubin, fatbin written from this binary's own bundle; the compile-time
//! `CARGO_MANIFEST_DIR` path; the fallback to embedded code; missing and broken files), the
//! embedded bundles, `ltoir::load_kernel_module` and `load_kernel_module`'s fallback; raw memory
//! calls, buffer casts and raw parts, events, context queries, `init`, `IntoResult`, `err.0`; VMM
//! mappings; and the async extras (`zip!` of five, `Zippable`, `value`, `with_context`,
//! `DeviceBox`, `cuda_launch_async!`). Random inputs, outputs poisoned first, CPU reference.
use cuda_core::{CudaContext, CudaStream, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, same_bits_f32};

mod asynchronous;
mod files;
mod memory;
mod vmm;

/// A temperature; `#[repr(transparent)]` over `f32`, so an `f32` buffer can be cast to it.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Celsius(pub f32);

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(c_elem) = c.get_mut(idx) {
            *c_elem = a[i] + b[i];
        }
    }

    /// Writes `base + i` to `p[i]` for `i < n`: memory reached only through a raw pointer.
    #[kernel]
    pub fn iota_at(p: *mut u32, n: u32, base: u32) {
        let i = thread::index_1d().get();
        if i < n as usize {
            // SAFETY: the host passes `n` elements at `p`.
            unsafe { *p.add(i) = base + i as u32 };
        }
    }

    #[kernel]
    pub fn to_kelvin(c: &[Celsius], mut k: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(k_elem) = k.get_mut(idx) {
            *k_elem = c[i].0 + 273.15;
        }
    }
}

/// This crate's name, under which its device code is embedded and written to `<crate>.ptx`.
pub const CRATE: &str = "gpu_host_compat";
/// Its package, which names its bundle in `artifact_bundles_from_current_exe`.
pub const PACKAGE: &str = "gpu-host-compat";

/// Everything the checks share.
pub struct Env {
    pub ctx: std::sync::Arc<CudaContext>,
    pub stream: std::sync::Arc<CudaStream>,
    pub module: kernels::Module,
}

/// Launches `vecadd` of `module` (any kernel source) on random inputs of `n` elements and
/// compares with the CPU.
pub fn check_vecadd(
    env: &Env,
    rng: &mut Lcg,
    module: &impl cuda_host::KernelSource,
    n: usize,
    what: &str,
) -> Result<(), String> {
    let s = &env.stream;
    let (ha, hb) = (rng.vec_f32(n), rng.vec_f32(n));
    let a = ck(DeviceBuffer::from_host(s, &ha), "copy a")?;
    let b = ck(DeviceBuffer::from_host(s, &hb), "copy b")?;
    let mut c = ck(DeviceBuffer::from_host(s, &vec![f32::NAN; n]), "poison c")?;
    ck(
        cuda_host::cuda_launch! {
            kernel: vecadd,
            stream: s,
            module: module,
            config: LaunchConfig::for_num_elems(n as u32),
            args: [slice(a), slice(b), slice_mut(c)]
        },
        &format!("cuda_launch! vecadd ({what})"),
    )?;
    let want: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x + y).collect();
    compare(what, &ck(c.to_host_vec(s), "copy c back")?, &want, same_bits_f32)
}

fn main() {
    let mut report = Report::new("host-compat");
    let mut rng = Lcg::from_env_or_clock();
    let (ctx, stream, module) = report.load(kernels::load);
    let env = Env { ctx, stream, module };
    files::checks(&mut report, &mut rng, &env);
    memory::checks(&mut report, &mut rng, &env);
    vmm::checks(&mut report, &mut rng, &env);
    asynchronous::checks(&mut report, &mut rng, &env);
    report.finish()
}
