//! GPU test: built only for sm_100a (`oxide-arch`), which runs on sm_100 GPUs only. On any other
//! GPU loading must fail with CUDA_ERROR_NO_BINARY_FOR_GPU explained: the GPU's arch, the
//! bundle's, and the `--arch` to rebuild with.
use cuda_core::CudaContext;
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Report, ck};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn fill(mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        if let Some(o) = out.get_mut(idx) {
            *o = 1;
        }
    }
}

fn main() {
    let mut report = Report::new("no-binary-sm100a");
    let ctx = report.setup(|| ck(CudaContext::new(0), "CudaContext::new(0)"));
    let (major, minor) = ctx.capability();
    let arch = format!("sm_{major}{minor}");
    println!("GPU {} is {arch}", ctx.name());
    report.check("explained-no-binary", || {
        if arch == "sm_100" {
            return Err("this GPU is sm_100, where sm_100a code runs: run this test on another GPU".into());
        }
        let err = match kernels::load(&ctx) {
            Ok(_) => return Err("loading sm_100a-only device code succeeded".into()),
            Err(e) => e.to_string(),
        };
        println!("error: {err}");
        let needles = [
            "CUDA_ERROR_NO_BINARY_FOR_GPU".to_string(),
            format!("({arch}, compute capability {major}.{minor})"),
            "cubin sm_100a".to_string(),
            "ptx sm_100a".to_string(),
            "`sm_100a` code runs only on sm_100 GPUs".to_string(),
            format!("rebuild with `cargo oxide build --arch {arch}`"),
        ];
        match needles.iter().find(|n| !err.contains(n.as_str())) {
            Some(missing) => Err(format!("the error lacks `{missing}`")),
            None => Ok(()),
        }
    });
    report.finish()
}
