//! GPU test: built only for sm_80 (`oxide-arch`) with LTOIR (`oxide-emit`). On a newer GPU
//! (H200: sm_90) the loader has no cubin that runs and JIT-compiles the sm_80 PTX; a bundle of the
//! LTOIR alone loads through nvJitLink — one of a CUDA release at least that of the libNVVM that
//! made it, found among several (set CUDA_OXIDE_NVJITLINK where the host's is older). Both compute
//! vecadd against the CPU; LTOIR of a release no nvJitLink here has fails, explained.
use std::sync::Arc;

use cuda_core::{CudaContext, CudaStream, DeviceBuffer, LaunchConfig, Module};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};
use oxide_contract::bundle::{Payload, write_bundle};
use oxide_contract::manifest::PayloadKind;
use oxide_contract::toolkit::CudaRelease;

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, same_bits_f32};

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
}

const N: usize = 100_003;

fn run_vecadd(module: &kernels::Module, stream: &Arc<CudaStream>, rng: &mut Lcg) -> Result<(), String> {
    let (a, b) = (rng.vec_f32(N), rng.vec_f32(N));
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let a_dev = ck(DeviceBuffer::from_host(stream, &a), "copy a")?;
    let b_dev = ck(DeviceBuffer::from_host(stream, &b), "copy b")?;
    let mut c_dev = ck(DeviceBuffer::from_host(stream, &vec![f32::NAN; N]), "poison c")?;
    ck(module.vecadd(stream, LaunchConfig::for_num_elems(N as u32), &a_dev, &b_dev, &mut c_dev), "launch vecadd")?;
    compare("c", &ck(c_dev.to_host_vec(stream), "copy c")?, &want, same_bits_f32)
}

/// The crate's bundle with only its LTOIR payloads, read from the artifact folder
/// (`CUDA_OXIDE_ARTIFACT_DIR`, which the GPU bundle's run.sh sets); `release` replaces the CUDA
/// release the manifest records for them.
fn ltoir_only_bundle(release: Option<CudaRelease>) -> Result<(Vec<u8>, Option<CudaRelease>), String> {
    let manifests = ck(cuda_core::embedded_manifests(), "embedded manifests")?;
    let manifest = manifests.iter().find(|m| m.crate_name == "gpu_jit_sm80").ok_or("no manifest of gpu_jit_sm80")?;
    let dir = std::env::var_os("CUDA_OXIDE_ARTIFACT_DIR").ok_or("CUDA_OXIDE_ARTIFACT_DIR is not set")?;
    let dir = std::path::Path::new(&dir).join(&manifest.dir);
    let mut files = Vec::new();
    for p in manifest.payloads.iter().filter(|p| p.kind == PayloadKind::Ltoir) {
        let bytes = std::fs::read(dir.join(&p.file)).map_err(|e| format!("read {}: {e}", p.file))?;
        files.push(bytes);
    }
    if files.is_empty() {
        return Err("the manifest lists no LTOIR (built without --emit ltoir?)".into());
    }
    let sm80 = oxide_contract::Arch::parse("sm_80").unwrap().code();
    let payloads: Vec<Payload<'_>> =
        files.iter().map(|b| Payload { kind: PayloadKind::Ltoir, sm: sm80, bytes: b }).collect();
    let mut m = (*manifest).clone();
    m.payloads.retain(|p| p.kind == PayloadKind::Ltoir);
    let recorded = m.payloads.iter().filter_map(|p| p.cuda_release).max();
    if let Some(release) = release {
        m.payloads.iter_mut().for_each(|p| p.cuda_release = Some(release));
    }
    Ok((write_bundle(&m, &payloads), recorded))
}

/// Loads the LTOIR-only bundle (linked by nvJitLink for this GPU).
fn ltoir_only_module(ctx: &Arc<CudaContext>) -> Result<(Module, PayloadKind, String), String> {
    let (bytes, recorded) = ltoir_only_bundle(None)?;
    let recorded = recorded.ok_or("the manifest records no CUDA release for its LTOIR")?;
    // The library the loader will pick, for the log.
    let lib = cuda_link::NvJitLink::find(Some(recorded)).map_err(|e| e.to_string())?;
    let (major, minor) = lib.version();
    println!("LTOIR made by CUDA {recorded}; linking with nvJitLink {major}.{minor} at {}", lib.path().display());
    let loaded = ck(cuda_core::load_bundle(ctx, &bytes), "load the LTOIR-only bundle")?;
    let (kind, arch) = loaded.payload();
    Ok((loaded.module().clone(), kind, arch.to_string()))
}

fn main() {
    let mut report = Report::new("jit-sm80");
    let mut rng = Lcg::from_env_or_clock();
    let (ctx, stream, module) = report.load(kernels::load);
    let (major, minor) = ctx.capability();
    println!("GPU {} is sm_{major}{minor}", ctx.name());

    report.check("ptx-jit", || {
        let bundles = module.kernels().loaded_bundles();
        let (kind, arch) = bundles.first().map(|b| b.payload()).ok_or("no bundle loaded")?;
        let want = if (major, minor) == (8, 0) { PayloadKind::Cubin } else { PayloadKind::Ptx };
        if kind != want || arch != "sm_80" {
            return Err(format!("loaded the {kind} {arch} payload, expected the {want} sm_80 one"));
        }
        run_vecadd(&module, &stream, &mut rng)
    });

    report.check("ltoir-nvjitlink", || {
        let (m, kind, arch) = ltoir_only_module(&ctx)?;
        if kind != PayloadKind::Ltoir {
            return Err(format!("loaded the {kind} {arch} payload, expected LTOIR"));
        }
        let module = ck(kernels::from_module(m), "bind the kernels of the linked module")?;
        run_vecadd(&module, &stream, &mut rng)
    });

    // LTOIR said to come from a CUDA release no nvJitLink here has: the load fails and the error
    // names the release, each nvJitLink found and the fixes.
    report.check("ltoir-too-new-explained", || {
        let (bytes, _) = ltoir_only_bundle(Some(CudaRelease::new(13, 99)))?;
        let err = match cuda_core::load_bundle(&ctx, &bytes) {
            Ok(_) => return Err("a bundle of CUDA 13.99 LTOIR loaded".into()),
            Err(e) => e.to_string(),
        };
        println!("{err}");
        for needle in ["made by CUDA 13.99", "too old", "CUDA_OXIDE_NVJITLINK", "--arch sm_"] {
            if !err.contains(needle) {
                return Err(format!("the error lacks {needle:?}"));
            }
        }
        Ok(())
    });

    report.finish()
}
