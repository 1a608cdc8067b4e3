//! Timing with CUDA events (warm-up, interleaved repetitions, median), the two ceilings the
//! table compares with (device-to-device copy bandwidth, FP32 FMA rate), and the nvcc side:
//! cubins loaded with `Module::from_cubin` and launched through `cuda_core::launch`.

use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cuda_core::{CudaContext, CudaEvent, CudaStream, DeviceBuffer, Function, LaunchConfig, Module, sys};

/// Turns a runtime error into the failure text, naming the call that failed.
pub fn ck<T, E: std::fmt::Display>(result: Result<T, E>, what: &str) -> Result<T, String> {
    result.map_err(|e| format!("{what}: {e}"))
}

/// The events around one timed launch. The launch closure records `start`, enqueues its own
/// preparation (if any) before it, and `stop` after the kernel.
pub struct Stamp {
    start: CudaEvent,
    stop: CudaEvent,
}

impl Stamp {
    fn new(ctx: &Arc<CudaContext>) -> Result<Stamp, String> {
        Ok(Stamp { start: ck(CudaEvent::new(ctx), "cuEventCreate")?, stop: ck(CudaEvent::new(ctx), "cuEventCreate")? })
    }

    /// Times whatever `launch` enqueues on `stream`.
    pub fn around(&self, stream: &CudaStream, launch: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
        ck(self.start.record(stream), "record start event")?;
        launch()?;
        ck(self.stop.record(stream), "record stop event")
    }

    fn ms(&self) -> Result<f64, String> {
        Ok(ck(self.start.elapsed_ms(&self.stop), "event elapsed time")? as f64)
    }
}

/// Median and spread of one side's repetitions, in milliseconds.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub median_ms: f64,
    /// (p90 − p10) / median: the run-to-run noise; ratios closer to 1 than this are a tie.
    pub spread: f64,
}

fn summarize(mut ms: Vec<f64>) -> Timing {
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    let median = at(0.5);
    Timing { median_ms: median, spread: (at(0.9) - at(0.1)) / median }
}

/// A side's launch: `(repetition, stamp)` → enqueue the timed work (rotating inputs by the
/// repetition number) inside `stamp.around(..)`.
pub type Launch<'a> = dyn FnMut(usize, &Stamp) -> Result<(), String> + 'a;

/// Warms both sides up, then times `reps` launches of each, interleaved (Rust first on even
/// repetitions, nvcc first on odd ones) so that clock or thermal drift hits both alike.
pub fn time_sides(
    ctx: &Arc<CudaContext>,
    stream: &CudaStream,
    warmup: usize,
    reps: usize,
    sides: &mut [Option<&mut Launch<'_>>],
) -> Result<Vec<Option<Timing>>, String> {
    let scratch = Stamp::new(ctx)?;
    for w in 0..warmup {
        for side in sides.iter_mut().flatten() {
            side(w, &scratch)?;
        }
    }
    let mut stamps: Vec<Vec<Stamp>> = Vec::new();
    for _ in 0..sides.len() {
        stamps.push((0..reps).map(|_| Stamp::new(ctx)).collect::<Result<_, _>>()?);
    }
    #[allow(clippy::needless_range_loop)] // `r` indexes the stamps of every side, not one list
    for r in 0..reps {
        // Alternate the order, so neither side always runs right after the other.
        let order: Vec<usize> = if r % 2 == 0 { (0..sides.len()).collect() } else { (0..sides.len()).rev().collect() };
        for s in order {
            if let Some(side) = sides[s].as_mut() {
                side(warmup + r, &stamps[s][r])?;
            }
        }
    }
    ck(stream.synchronize(), "synchronize after the timed launches (a kernel failed while running)")?;
    sides
        .iter()
        .zip(&stamps)
        .map(|(side, st)| match side {
            Some(_) => Ok(Some(summarize(st.iter().map(Stamp::ms).collect::<Result<_, _>>()?))),
            None => Ok(None),
        })
        .collect()
}

/// The device's L2 size in bytes.
pub fn l2_bytes(ctx: &CudaContext) -> Result<usize, String> {
    let (mut dev, mut value) = (0, 0);
    let attr = sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE;
    // SAFETY: plain attribute queries on a valid ordinal.
    let results =
        unsafe { [sys::cuDeviceGet(&mut dev, ctx.ordinal() as i32), sys::cuDeviceGetAttribute(&mut value, attr, dev)] };
    match results.iter().find(|r| **r != sys::CUresult::CUDA_SUCCESS) {
        None => Ok(value as usize),
        Some(r) => Err(format!("querying the L2 size: {r:?}")),
    }
}

/// The memory ceiling: a 1 GiB device-to-device copy (`cuMemcpyDtoDAsync`), counting bytes read
/// plus bytes written, median of 10 after 2 warm-ups. Returns bytes per second.
pub fn copy_ceiling(ctx: &Arc<CudaContext>, stream: &CudaStream) -> Result<f64, String> {
    const BYTES: usize = 1 << 30;
    let src = ck(DeviceBuffer::<u32>::zeroed(stream, BYTES / 4), "allocate the copy source")?;
    let mut dst = ck(DeviceBuffer::<u32>::zeroed(stream, BYTES / 4), "allocate the copy destination")?;
    let mut copy = |_: usize, s: &Stamp| s.around(stream, || ck(dst.copy_from(stream, &src), "cuMemcpyDtoDAsync"));
    let t = time_sides(ctx, stream, 2, 10, &mut [Some(&mut copy)])?;
    Ok(2.0 * BYTES as f64 / (t[0].expect("timed").median_ms * 1e-3))
}

/// The cubins nvcc built from `bench/cuda/*.cu`, one module per source file.
pub struct Nvcc {
    pub dir: PathBuf,
    /// `NVCC_VERSION` written beside the cubins by `run.sh`.
    pub version: String,
    modules: Vec<(String, Module)>,
}

impl Nvcc {
    /// Loads every `<dir>/*.cubin`.
    pub fn load(ctx: &Arc<CudaContext>, dir: &Path) -> Result<Nvcc, String> {
        let entries = ck(std::fs::read_dir(dir), &format!("read the cubin folder {}", dir.display()))?;
        let mut modules = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "cubin") {
                let bytes = ck(std::fs::read(&path), &format!("read {}", path.display()))?;
                let module = ck(Module::from_cubin(ctx, &bytes), &format!("load {}", path.display()))?;
                let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                modules.push((stem, module));
            }
        }
        if modules.is_empty() {
            return Err(format!("no .cubin files in {}", dir.display()));
        }
        let version = std::fs::read_to_string(dir.join("NVCC_VERSION"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "nvcc (version unknown)".into());
        Ok(Nvcc { dir: dir.to_path_buf(), version, modules })
    }

    /// Entry `entry` of `<file>.cubin`.
    pub fn function(&self, file: &str, entry: &str) -> Result<Function, String> {
        let (_, module) = self
            .modules
            .iter()
            .find(|(stem, _)| stem == file)
            .ok_or_else(|| format!("{file}.cubin is not in {}", self.dir.display()))?;
        ck(module.function(entry), &format!("{file}.cubin: entry {entry}"))
    }
}

/// One argument of an nvcc kernel (a plain C parameter list: pointers and scalars).
#[derive(Clone, Copy)]
pub enum Arg {
    Ptr(u64),
    I32(i32),
    U32(u32),
    F32(f32),
    F64(f64),
}

impl Arg {
    pub fn buf<T>(b: &DeviceBuffer<T>) -> Arg {
        Arg::Ptr(b.as_device_ptr())
    }
}

/// Launches an nvcc kernel through the same `cuda_core::launch` the generated methods use.
pub fn launch_nvcc(f: &Function, stream: &CudaStream, config: LaunchConfig, args: &[Arg]) -> Result<(), String> {
    let mut values: Vec<Arg> = args.to_vec();
    let mut ptrs: Vec<*mut c_void> = values
        .iter_mut()
        .map(|a| match a {
            Arg::Ptr(p) => (p as *mut u64).cast(),
            Arg::I32(v) => (v as *mut i32).cast(),
            Arg::U32(v) => (v as *mut u32).cast(),
            Arg::F32(v) => (v as *mut f32).cast(),
            Arg::F64(v) => (v as *mut f64).cast(),
        })
        .collect();
    // SAFETY: each .cu kernel's parameter list is exactly the `Arg`s its caller passes (pointers
    // to live device buffers of the sizes the kernel reads, then the scalars), in order.
    ck(unsafe { cuda_core::launch(f, stream, &config, None, &mut ptrs) }, &format!("launch {} (nvcc)", f.entry()))
}

/// The FP32 ceiling: `fma_peak` from `calibrate.cubin` (8 independent FMA chains per thread,
/// full occupancy). Returns FLOP per second.
pub fn fma_ceiling(ctx: &Arc<CudaContext>, stream: &CudaStream, nvcc: &Nvcc) -> Result<f64, String> {
    let f = nvcc.function("calibrate", "fma_peak")?;
    let blocks = ctx.sm_count() * 8;
    let threads = blocks as usize * 256;
    let iters = 8192;
    let out = ck(DeviceBuffer::<f32>::zeroed(stream, threads), "allocate fma_peak output")?;
    let config = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let args = [Arg::buf(&out), Arg::I32(iters), Arg::F32(0.999), Arg::F32(0.001)];
    let mut run = |_: usize, s: &Stamp| s.around(stream, || launch_nvcc(&f, stream, config, &args));
    let t = time_sides(ctx, stream, 2, 10, &mut [Some(&mut run)])?;
    let flops = 2.0 * 8.0 * iters as f64 * threads as f64;
    Ok(flops / (t[0].expect("timed").median_ms * 1e-3))
}
