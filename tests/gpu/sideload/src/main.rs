//! GPU test: `load_kernel_module(&ctx, "gpu_sideload")` loads this crate's device code from the
//! build artifacts (`$CUDA_OXIDE_ARTIFACT_DIR`, which the GPU bundle's run.sh sets, else the
//! `target/oxide` above the executable) and `cuda_launch!` launches it with every argument form:
//! `slice`, `slice_mut`, scalars, a by-value struct, a closure (also as `apply::<_>`, its type
//! inferred), a generic kernel and a cluster launch. The module and stream stay usable after each
//! macro call; an unknown module name lists the modules that exist.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cluster_launch, cuda_module, kernel, thread};
use cuda_host::{cuda_launch, load_kernel_module};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, same_bits_f32};

#[derive(Clone, Copy, Debug)]
pub struct Lerp {
    pub t: f32,
    pub bias: i16,
}

// The kernels live in a #[cuda_module] so the build compiles them (the typed methods name every
// instance); this test launches them through the sideloaded artifacts instead.
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

    #[kernel]
    pub fn lerp(p: Lerp, k: u32, a: &[f32], b: &[f32], out: &mut [f32]) {
        let i = thread::index_1d().get();
        if i < out.len() {
            out[i] = a[i] + (b[i] - a[i]) * p.t + (p.bias as f32) + k as f32;
        }
    }

    #[kernel]
    pub fn apply<F: Fn(f32) -> f32>(f: F, data: &mut [f32]) {
        let i = thread::index_1d().get();
        if i < data.len() {
            data[i] = f(data[i]);
        }
    }

    #[kernel]
    pub fn scale<T: Copy + core::ops::Mul<Output = T>>(k: T, data: &mut [T]) {
        let i = thread::index_1d().get();
        if i < data.len() {
            data[i] = data[i] * k;
        }
    }

    #[kernel]
    #[cluster_launch(4, 1, 1)]
    pub fn cluster_fill(mut out: DisjointSlice<u32>) {
        let block = thread::blockIdx_x();
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = block;
        }
    }
}

/// Names every kernel instance and closure type the sideloaded launches use, so the build
/// compiles them; `main` takes its address (it is never called).
fn instances(
    m: &kernels::Module,
    s: &cuda_core::CudaStream,
    d: &mut DeviceBuffer<f32>,
    u: &mut DeviceBuffer<u32>,
    k: f32,
) {
    let c = LaunchConfig::for_num_elems(1);
    let _ = m.scale::<f32>(s, c, 1.0, d);
    let _ = m.scale::<u32>(s, c, 1, u);
    let _ = m.apply(s, c, closure(k), d);
    let _ = m.cluster_fill(s, c, u);
    let e = DeviceBuffer::<f32>::zeroed(s, 0);
    if let Ok(e) = e {
        let _ = m.vecadd(s, c, &e, &e, d);
        let _ = m.lerp(s, c, Lerp { t: 0.0, bias: 0 }, 0, &e, &e, d);
    }
}

type Instances = fn(&kernels::Module, &cuda_core::CudaStream, &mut DeviceBuffer<f32>, &mut DeviceBuffer<u32>, f32);

fn closure(k: f32) -> impl Fn(f32) -> f32 + Copy + 'static {
    move |x| x * k - 1.5
}

const N: usize = 65_537;

fn main() {
    let _ = std::hint::black_box(instances as Instances);
    let mut report = Report::new("sideload");
    let mut rng = Lcg::from_env_or_clock();
    let (ctx, module) = report.setup(|| {
        let ctx = ck(CudaContext::new(0), "CudaContext::new(0)")?;
        let module = ck(load_kernel_module(&ctx, "gpu_sideload"), "load_kernel_module(&ctx, \"gpu_sideload\")")?;
        Ok((ctx, module))
    });
    let stream = ctx.default_stream();
    println!("    loaded {:?}", module.payload());

    report.check("seed_cuda_launch_vecadd", || {
        let (ha, hb) = (rng.vec_f32(N), rng.vec_f32(N));
        let a = ck(DeviceBuffer::from_host(&stream, &ha), "copy a")?;
        let b = ck(DeviceBuffer::from_host(&stream, &hb), "copy b")?;
        let mut c = ck(DeviceBuffer::from_host(&stream, &vec![f32::NAN; N]), "poison c")?;
        // The chapter's snippet (with N elements); the macro borrows, so it runs twice.
        for _ in 0..2 {
            ck(
                cuda_launch! {
                    kernel: vecadd,
                    stream: stream,
                    module: module,
                    config: LaunchConfig::for_num_elems(N as u32),
                    args: [slice(a), slice(b), slice_mut(c)]
                },
                "cuda_launch! vecadd",
            )?;
        }
        ck(stream.synchronize(), "synchronize after vecadd")?;
        let want: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x + y).collect();
        compare("vecadd", &ck(c.to_host_vec(&stream), "copy c back")?, &want, same_bits_f32)
    });

    report.check("struct_scalar_slices", || {
        let (ha, hb) = (rng.vec_f32(N), rng.vec_f32(N));
        let p = Lerp { t: 0.25, bias: (rng.next_u64() % 100) as i16 - 50 };
        let k = (rng.next_u64() % 1000) as u32;
        let a = ck(DeviceBuffer::from_host(&stream, &ha), "copy a")?;
        let b = ck(DeviceBuffer::from_host(&stream, &hb), "copy b")?;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![f32::NAN; N]), "poison out")?;
        let out_ref = &mut out;
        ck(
            cuda_launch! {
                kernel: lerp,
                stream: &stream,
                module: &module,
                config: LaunchConfig::for_num_elems(N as u32),
                args: [p, k, slice(&a), slice(b), slice_mut(out_ref)]
            },
            "cuda_launch! lerp",
        )?;
        ck(stream.synchronize(), "synchronize after lerp")?;
        // (b - a) * 0.25 is exact, so a fused multiply-add rounds the same as the CPU.
        let want: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x + (y - x) * p.t + (p.bias as f32) + k as f32).collect();
        compare("lerp", &ck(out.to_host_vec(&stream), "copy out back")?, &want, |g, w| {
            (g - w).abs() <= 1e-3 * w.abs().max(1.0)
        })
    });

    report.check("closure_and_generic", || {
        let h = rng.vec_f32(N);
        let k = rng.next_f32();
        let mut d = ck(DeviceBuffer::from_host(&stream, &h), "copy data")?;
        let f = closure(k);
        // A closure's type cannot be written in a turbofish: a generic helper names it.
        launch_apply(&module, &stream, f, &mut d)?;
        ck(
            cuda_launch! {
                kernel: kernels::scale::<f32>,
                stream: stream,
                module: module,
                config: LaunchConfig::for_num_elems(N as u32),
                args: [2.0f32, slice_mut(d)]
            },
            "cuda_launch! scale::<f32>",
        )?;
        // NVIDIA's spelling: the closure's type as `_`, inferred from the argument.
        let c = rng.next_f32();
        ck(
            cuda_launch! {
                kernel: kernels::apply::<_>,
                stream: stream,
                module: module,
                config: LaunchConfig::for_num_elems(N as u32),
                args: [move |x: f32| x - c, slice_mut(d)]
            },
            "cuda_launch! apply::<_>",
        )?;
        ck(stream.synchronize(), "synchronize after apply + scale + apply::<_>")?;
        let want: Vec<f32> = h.iter().map(|x| f(*x) * 2.0 - c).collect();
        compare("apply then scale", &ck(d.to_host_vec(&stream), "copy back")?, &want, |g, w| {
            (g - w).abs() <= 1e-3 * w.abs().max(1.0)
        })?;
        let hu: Vec<u32> = (0..N).map(|_| rng.next_u64() as u32).collect();
        let ku = rng.next_u64() as u32;
        let mut u = ck(DeviceBuffer::from_host(&stream, &hu), "copy u32")?;
        ck(
            cuda_launch! {
                kernel: kernels::scale::<u32>,
                stream: stream,
                module: module,
                config: LaunchConfig::for_num_elems(N as u32),
                args: [ku, slice_mut(u)]
            },
            "cuda_launch! scale::<u32>",
        )?;
        let want: Vec<u32> = hu.iter().map(|x| x.wrapping_mul(ku)).collect();
        compare("scale::<u32>", &ck(u.to_host_vec(&stream), "copy u32 back")?, &want, |a, b| a == b)
    });

    report.check("cluster_dim", || {
        if ctx.capability().0 < 9 {
            println!("    (skipped: needs sm_90)");
            return Ok(());
        }
        let blocks = 64usize;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![u32::MAX; blocks * 128]), "poison out")?;
        let config = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
        ck(
            cuda_launch! {
                kernel: cluster_fill,
                stream: stream,
                module: module,
                config: config,
                cluster_dim: (4, 1, 1),
                args: [slice_mut(out)]
            },
            "cuda_launch! cluster_fill with cluster_dim (4, 1, 1)",
        )?;
        ck(stream.synchronize(), "synchronize after cluster_fill")?;
        let want: Vec<u32> = (0..blocks * 128).map(|i| (i / 128) as u32).collect();
        compare("cluster_fill", &ck(out.to_host_vec(&stream), "copy back")?, &want, |a, b| a == b)
    });

    report.check("unknown_module_lists_available", || match load_kernel_module(&ctx, "no_such_module") {
        Ok(_) => Err("loaded a module that does not exist".into()),
        Err(e) => {
            let text = e.to_string();
            if text.contains("no device module `no_such_module`") && text.contains("gpu_sideload") {
                println!("    {text}");
                Ok(())
            } else {
                Err(format!("message should name the module and list gpu_sideload: {text}"))
            }
        }
    });

    report.finish()
}

/// `cuda_launch!` for a closure argument, with the closure's type as the generic parameter.
fn launch_apply<F: Fn(f32) -> f32 + Copy + 'static>(
    module: &cuda_host::LoadedBundle,
    stream: &cuda_core::CudaStream,
    f: F,
    d: &mut DeviceBuffer<f32>,
) -> Result<(), String> {
    ck(
        cuda_launch! {
            kernel: kernels::apply::<F>,
            stream: stream,
            module: module,
            config: LaunchConfig::for_num_elems(d.len() as u32),
            args: [f, slice_mut(d)]
        },
        "cuda_launch! apply::<F>",
    )
}
