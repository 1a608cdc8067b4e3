//! LTOIR and Rust ⇄ CUDA C++ device code, without a GPU (docs/interop.md): `--emit ltoir` writes
//! LTOIR per arch into the manifest and bundle; a Rust kernel calls a CUDA C++ device function
//! compiled from the `.cu` file its Cargo.toml names (nvcc → LTOIR, nvJitLink → cubin); a CUDA C++
//! kernel calls Rust device functions through the generated C header and the crate's LTOIR. The
//! linked cubins are read back with `cuobjdump`. The GPU runs of the same code are
//! `tests/gpu/interop-*`.
use std::path::{Path, PathBuf};
use std::process::Command;

use oxide_contract::manifest::PayloadKind;
use oxide_tests::*;

/// A kernel that calls `cpp_scale`, a CUDA C++ device function of `src/ops.cu`.
const RUST_CALLS_CPP: &str = r#"
use cuda_device::{DisjointSlice, cuda_module, device, kernel, thread};

#[device]
unsafe extern "C" {
    fn cpp_scale(x: f32, k: f32) -> f32;
}

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn scale(a: &[f32], k: f32, mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = unsafe { cpp_scale(a[i], k) };
        }
    }
}

fn main() {
    // The host never runs CUDA C++ device code: the stand-in panics.
    let r = std::panic::catch_unwind(|| unsafe { cpp_scale(1.0, 2.0) });
    assert!(r.is_err());
}
"#;

/// `SCALE_BIAS` comes from `nvcc-flags`: 1.0 is `0f3F800000` in the linked PTX.
const OPS_CU: &str = "extern \"C\" __device__ float cpp_scale(float x, float k) { return x * k + SCALE_BIAS; }\n";

/// Device functions for CUDA C++, in a crate without kernels: an explicit export and an implicit
/// one (a `pub` `#[device]` function with C types); `pair` has no C type and is not exported.
const RUST_FOR_CPP: &str = r#"
use cuda_device::device;

#[device]
#[unsafe(no_mangle)]
pub extern "C" fn rust_axpy(a: f32, x: f32, y: f32) -> f32 {
    a * x + y
}

#[device]
pub fn clamp_f32(v: f32, lo: f32, hi: f32) -> f32 {
    if v < lo { lo } else if v > hi { hi } else { v }
}

#[device]
pub fn pair(v: (f32, f32)) -> f32 {
    v.0
}

fn main() {}
"#;

/// A CUDA C++ kernel calling the Rust functions through the generated header.
const CALLER_CU: &str = r#"#include "rust_for_cpp.h"
extern "C" __global__ void axpy_clamp(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = clamp_f32(rust_axpy(a, x[i], y[i]), -100.0f, 100.0f);
}
"#;

/// A CUDA tool of the managed install (or CUDA_HOME…); the message says how to get it.
fn cuda_tool(name: &str) -> PathBuf {
    cargo_oxide::tools::cuda_roots()
        .into_iter()
        .map(|root| root.join("bin").join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{name}` not found: run `./x setup` (`cargo oxide setup` installs it)"))
}

/// `cuobjdump -sass` of a cubin (it runs nvdisasm, which sits next to it in a CUDA install).
fn sass(cubin: &Path) -> String {
    let cuobjdump = cuda_tool("cuobjdump");
    let nvdisasm = cuda_tool("nvdisasm");
    let path = format!("{}:{}", nvdisasm.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(&cuobjdump).arg("-sass").arg(cubin).env("PATH", path).output().expect("run cuobjdump");
    assert!(out.status.success(), "cuobjdump -sass {}: {}", cubin.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The source lines the line table of a cubin names, as `(file, line)` (`nvdisasm -g`).
fn line_table(cubin: &Path) -> Vec<(String, u32)> {
    let out = Command::new(cuda_tool("nvdisasm")).arg("-g").arg(cubin).output().expect("run nvdisasm");
    assert!(out.status.success(), "nvdisasm -g {}: {}", cubin.display(), String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines: Vec<(String, u32)> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("//## File \""))
        .filter_map(|l| {
            let (file, rest) = l.split_once("\", line ")?;
            Some((file.to_string(), rest.split_whitespace().next()?.parse().ok()?))
        })
        .collect();
    lines.sort();
    lines.dedup();
    lines
}

/// The names of a cubin's ELF sections (`cuobjdump -elf`).
fn sections(cubin: &Path) -> String {
    let out = Command::new(cuda_tool("cuobjdump")).arg("-elf").arg(cubin).output().expect("run cuobjdump");
    assert!(out.status.success(), "cuobjdump -elf {}: {}", cubin.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The 1-based line of `src/main.rs` that contains `text`.
fn line_of(main_rs: &str, text: &str) -> u32 {
    main_rs.lines().position(|l| l.contains(text)).unwrap_or_else(|| panic!("no `{text}` in main.rs")) as u32 + 1
}

fn add_metadata(project: &TempProject, metadata: &str) {
    let path = project.path().join("Cargo.toml");
    let manifest = std::fs::read_to_string(&path).unwrap();
    let manifest = manifest.replace("\n[workspace]", &format!("\n{metadata}\n[workspace]"));
    std::fs::write(&path, manifest).unwrap();
}

#[test]
fn rust_kernel_calls_a_cuda_cpp_device_function() {
    let project = TempProject::new("interop-rust-calls-cpp", RUST_CALLS_CPP);
    std::fs::write(project.path().join("src/ops.cu"), OPS_CU).unwrap();
    add_metadata(
        &project,
        "[package.metadata.cuda-oxide]\ncuda-sources = [\"src/ops.cu\"]\nnvcc-flags = [\"-DSCALE_BIAS=1.0f\"]\n",
    );
    let name = project.crate_name();
    remove_artifacts("dev", &name);
    let out = cargo_oxide(project.path(), &["run", "--arch", "sm_80,sm_90", "--emit", "ltoir"]);
    assert_success(&out, "cargo oxide run (Rust kernel calling CUDA C++)");

    let manifest = read_manifest("dev", &name);
    assert_eq!(manifest.imports.len(), 1, "{:?}", manifest.imports);
    assert_eq!(manifest.imports[0].c_decl, "float cpp_scale(float x, float k)");
    let dir = device_dir("dev").join(&name);
    for arch in ["sm_80", "sm_90"] {
        // The crate's LTOIR and the source's, both in the bundle for a load-time link.
        let ltoir: Vec<&str> = manifest
            .payloads
            .iter()
            .filter(|p| p.kind == PayloadKind::Ltoir && p.arch == arch)
            .map(|p| p.file.as_str())
            .collect();
        assert_eq!(ltoir, [format!("{name}.{arch}.ltoir"), format!("{name}.ops.{arch}.ltoir")], "{arch}");
        // Each records the CUDA release that made it (libNVVM's, nvcc's): the loader links it only
        // with an nvJitLink as new.
        let tools = cargo_oxide::tools::CudaTools::find();
        let libnvvm = cargo_oxide::tools::cuda_release(&tools.libnvvm.unwrap());
        let nvcc = cargo_oxide::tools::cuda_release(&tools.nvcc.unwrap());
        assert!(libnvvm.is_some_and(|r| r.major >= 13) && nvcc.is_some(), "{libnvvm:?} {nvcc:?}");
        let releases: Vec<_> = manifest
            .payloads
            .iter()
            .filter(|p| p.kind == PayloadKind::Ltoir && p.arch == arch)
            .map(|p| p.cuda_release)
            .collect();
        assert_eq!(releases, [libnvvm, nvcc], "{arch}");
        let others = manifest.payloads.iter().filter(|p| p.kind != PayloadKind::Ltoir);
        assert!(others.clone().all(|p| p.cuda_release.is_none()), "{:?}", others.collect::<Vec<_>>());
        for file in &ltoir {
            assert!(dir.join(file).is_file(), "{file} missing");
        }
        // nvJitLink inlined cpp_scale: the bias of ops.cu is in the kernel, no call is left.
        let ptx = std::fs::read_to_string(dir.join(format!("{name}.{arch}.ptx"))).unwrap();
        let entry = oxide_tests::ptx::entry(&ptx, "scale");
        assert!(entry.contains("fma.rn.f32") && entry.contains("0f3F800000"), "{entry}");
        assert!(!ptx.contains("cpp_scale"), "{ptx}");
        let sass = sass(&dir.join(format!("{name}.{arch}.cubin")));
        assert!(sass.contains(&format!("code for {arch}")) && sass.contains("Function : scale"), "{sass}");
        assert!(sass.contains("FFMA"), "{sass}");
        // A debug build's line info (the default `--device-debug lines`) survives libNVVM and
        // nvJitLink: the linked cubin's line table names the kernel's call of the C++ function.
        let cubin = dir.join(format!("{name}.{arch}.cubin"));
        let main_rs = std::fs::read_to_string(project.path().join("src/main.rs")).unwrap();
        let main_path = project.path().join("src/main.rs").display().to_string();
        let table = line_table(&cubin);
        let call = line_of(&main_rs, "cpp_scale(a[i], k)");
        assert!(table.contains(&(main_path.clone(), call)), "no {main_path}:{call} in the line table {table:?}");
        assert!(table.iter().any(|(file, _)| file.ends_with("src/ops.cu")), "{table:?}");
        assert!(sections(&cubin).contains(".nv_debug_line_sass"), "{arch}");
    }
}

/// A kernel calling CUB's warp reduction through an `extern "C"` wrapper; CCCL comes from
/// `cargo oxide setup` (CUDA 13's nvcc wheel has none).
const RUST_CALLS_CUB: &str = r#"
use cuda_device::{cuda_module, device, kernel, thread};

#[device]
unsafe extern "C" {
    fn cub_warp_sum(x: i32) -> i32;
}

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn warp_sums(x: &[i32], sums: &mut [i32]) {
        let i = thread::index_1d().get();
        let total = unsafe { cub_warp_sum(x[i]) };
        if thread::lane_id() == 0 {
            sums[i / 32] = total;
        }
    }
}

fn main() {}
"#;

const CUB_CU: &str = r#"#include <cub/warp/warp_reduce.cuh>
extern "C" __device__ int cub_warp_sum(int x) {
    __shared__ cub::WarpReduce<int>::TempStorage temp[32];
    return cub::WarpReduce<int>(temp[threadIdx.x / 32 % 32]).Sum(x);
}
"#;

#[test]
fn rust_kernel_calls_cub_with_full_debug_info() {
    let project = TempProject::new("interop-cub", RUST_CALLS_CUB);
    std::fs::write(project.path().join("src/cub.cu"), CUB_CU).unwrap();
    add_metadata(&project, "[package.metadata.cuda-oxide]\ncuda-sources = [\"src/cub.cu\"]\n");
    let name = project.crate_name();
    remove_artifacts("dev", &name);
    // What `cargo oxide debug` builds: full debug information, through LTOIR and nvJitLink's -g.
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_90", "--device-debug", "full"]);
    assert_success(&out, "cargo oxide build --device-debug full (Rust kernel calling CUB)");
    let cubin = device_dir("dev").join(&name).join(format!("{name}.sm_90.cubin"));
    let sass = sass(&cubin);
    assert!(sass.contains("Function : warp_sums") && sass.contains("SHFL"), "{sass}");
    let sections = sections(&cubin);
    for section in [".debug_info", ".debug_line", ".nv_debug_line_sass"] {
        assert!(sections.contains(section), "no {section} in the cubin:\n{sections}");
    }
    let main_rs = std::fs::read_to_string(project.path().join("src/main.rs")).unwrap();
    let main_path = project.path().join("src/main.rs").display().to_string();
    let call = line_of(&main_rs, "cub_warp_sum(x[i])");
    let table = line_table(&cubin);
    assert!(table.contains(&(main_path.clone(), call)), "no {main_path}:{call} in the line table {table:?}");
}

#[test]
fn cuda_cpp_kernel_calls_rust_device_functions() {
    let project = TempProject::new("rust-for-cpp", RUST_FOR_CPP);
    let name = project.crate_name();
    remove_artifacts("dev", &name);
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_90", "--emit", "ltoir"]);
    assert_success(&out, "cargo oxide build (Rust device functions for CUDA C++)");
    let dir = device_dir("dev").join(&name);

    let manifest = read_manifest("dev", &name);
    let exports: Vec<&str> = manifest.exports.iter().map(|e| e.c_decl.as_str()).collect();
    assert_eq!(exports, ["float rust_axpy(float a, float x, float y)", "float clamp_f32(float v, float lo, float hi)"]);
    let header = std::fs::read_to_string(dir.join("rust_for_cpp.h")).unwrap();
    assert!(header.contains("#ifndef CUDA_OXIDE_RUST_FOR_CPP_H"), "{header}");
    assert!(header.contains("extern \"C\" {"), "{header}");
    assert!(header.contains("__device__ float rust_axpy(float a, float x, float y);\n"), "{header}");
    assert!(header.contains("__device__ float clamp_f32(float v, float lo, float hi);\n"), "{header}");
    assert!(!header.contains("pair"), "{header}");

    // nvcc compiles the CUDA C++ kernel against the header, to LTOIR.
    let work = tempfile::tempdir().unwrap();
    let caller = work.path().join("caller.cu");
    std::fs::write(&caller, CALLER_CU).unwrap();
    let caller_ltoir = work.path().join("caller.ltoir");
    let out = Command::new(cuda_tool("nvcc"))
        .args(["-dc", "-dlto", "-ltoir", "-arch=lto_90"])
        .arg(format!("-I{}", dir.display()))
        .arg(&caller)
        .arg("-o")
        .arg(&caller_ltoir)
        .output()
        .expect("run nvcc");
    assert!(out.status.success(), "nvcc: {}", String::from_utf8_lossy(&out.stderr));

    // nvJitLink links it with the crate's LTOIR into a cubin.
    let tools = cargo_oxide::tools::CudaTools::find();
    let lib = tools.nvjitlink.expect("nvJitLink not found: run `./x setup`");
    let nvjitlink = cuda_link::NvJitLink::open(&lib).expect("open nvJitLink");
    let rust = std::fs::read(dir.join("rust_for_cpp.sm_90.ltoir")).unwrap();
    let cpp = std::fs::read(&caller_ltoir).unwrap();
    let inputs = [
        cuda_link::Input { kind: cuda_link::InputKind::Ltoir, name: "caller.ltoir", bytes: &cpp },
        cuda_link::Input { kind: cuda_link::InputKind::Ltoir, name: "rust_for_cpp.sm_90.ltoir", bytes: &rust },
    ];
    let arch = oxide_contract::Arch::parse("sm_90").unwrap();
    let options = oxide_contract::link::nvjitlink_options(
        arch,
        true,
        oxide_contract::link::LinkOutput::Cubin,
        oxide_contract::link::LinkDebug::None,
    );
    let cubin = nvjitlink.link(&options, &inputs).unwrap_or_else(|e| panic!("{e}"));
    let cubin_path = work.path().join("linked.cubin");
    std::fs::write(&cubin_path, cubin).unwrap();
    let sass = sass(&cubin_path);
    // rust_axpy's a*x+y and clamp_f32's bounds, inlined into the CUDA C++ kernel.
    assert!(sass.contains("Function : axpy_clamp"), "{sass}");
    assert!(sass.contains("FFMA") && sass.contains("FMNMX"), "{sass}");
}

#[test]
fn interop_errors_name_the_fix() {
    // A CUDA C++ function called from a kernel of a crate that names no sources.
    let project = TempProject::new("interop-no-sources", RUST_CALLS_CPP);
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_90"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("`cpp_scale` is a CUDA C++ function"), "{err}");
    assert!(err.contains("cuda-sources = [\"src/ops.cu\"]"), "{err}");

    // An explicit export whose type C has no spelling for.
    let bad =
        RUST_FOR_CPP.replace("pub extern \"C\" fn rust_axpy(a: f32,", "pub extern \"C\" fn rust_axpy(a: (f32, f32),");
    let project = TempProject::new("interop-bad-export", &bad.replace("a * x + y", "a.0 * x + y"));
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_90"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("`rust_axpy` is exported to CUDA C++, but its parameter `a` has type `(f32, f32)`"), "{err}");
    assert!(err.contains("src/main.rs"), "{err}");

    // A source file of a kind nvJitLink cannot take.
    let project = TempProject::new("interop-bad-source", RUST_CALLS_CPP);
    std::fs::write(project.path().join("src/ops.cpp"), OPS_CU).unwrap();
    add_metadata(&project, "[package.metadata.cuda-oxide]\ncuda-sources = [\"src/ops.cpp\"]\n");
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_90"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("`src/ops.cpp` in cuda-sources is not a file cuda-oxide can link; use one of .cu"), "{err}");
}
