//! Finds the local GPU and the CUDA driver: `nvidia-smi` first, else the driver API through `libcuda.so.1`.
use std::process::Command;

/// One GPU of this machine.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Gpu {
    pub name: String,
    /// Compute capability `(major, minor)`.
    pub compute_capability: (u32, u32),
}

impl Gpu {
    /// The `--arch` name of this GPU, e.g. `sm_90`.
    pub fn arch_name(&self) -> String {
        format!("sm_{}{}", self.compute_capability.0, self.compute_capability.1)
    }
}

/// The first GPU of this machine, if one can be found.
pub fn local_gpu() -> Option<Gpu> {
    from_nvidia_smi().or_else(from_driver)
}

/// [`local_gpu`], remembered for the rest of this boot: asking `nvidia-smi` takes longer than a
/// whole build with nothing to do, and builds without `--arch` ask every time.
pub fn local_gpu_this_boot() -> Option<Gpu> {
    let path = crate::tools::oxide_home().join("cache/local-gpu.json");
    let boot = crate::cache::boot_id();
    if !boot.is_empty()
        && let Some((cached_boot, gpu)) = crate::cache::read::<(String, Option<Gpu>)>(&path)
        && cached_boot == boot
    {
        return gpu;
    }
    let gpu = local_gpu();
    if !boot.is_empty() {
        crate::cache::write(&path, &(boot, gpu.clone()));
    }
    gpu
}

fn from_nvidia_smi() -> Option<Gpu> {
    let out =
        Command::new("nvidia-smi").args(["--query-gpu=name,compute_cap", "--format=csv,noheader"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    parse_nvidia_smi(&String::from_utf8_lossy(&out.stdout))
}

/// Parses the first line of `nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader`.
fn parse_nvidia_smi(text: &str) -> Option<Gpu> {
    let line = text.lines().next()?;
    let (name, cap) = line.rsplit_once(',')?;
    let (major, minor) = cap.trim().split_once('.')?;
    Some(Gpu { name: name.trim().to_string(), compute_capability: (major.parse().ok()?, minor.parse().ok()?) })
}

/// The CUDA driver library, when it can be loaded.
pub fn load_driver() -> Result<libloading::Library, String> {
    // SAFETY: libcuda's initialisers have no preconditions; we only look symbols up afterwards.
    unsafe { libloading::Library::new("libcuda.so.1") }.map_err(|e| e.to_string())
}

type CuInit = unsafe extern "C" fn(u32) -> i32;
type CuDeviceGetCount = unsafe extern "C" fn(*mut i32) -> i32;
type CuDeviceGet = unsafe extern "C" fn(*mut i32, i32) -> i32;
type CuDeviceGetAttribute = unsafe extern "C" fn(*mut i32, i32, i32) -> i32;
type CuDeviceGetName = unsafe extern "C" fn(*mut u8, i32, i32) -> i32;

const COMPUTE_CAPABILITY_MAJOR: i32 = 75;
const COMPUTE_CAPABILITY_MINOR: i32 = 76;

fn from_driver() -> Option<Gpu> {
    let lib = load_driver().ok()?;
    // SAFETY: the signatures are those of the CUDA driver API (cuda.h); every out-pointer points
    // to a live local of the right type and the name buffer's length is passed with it.
    unsafe {
        let init = lib.get::<CuInit>(b"cuInit\0").ok()?;
        let count = lib.get::<CuDeviceGetCount>(b"cuDeviceGetCount\0").ok()?;
        let get = lib.get::<CuDeviceGet>(b"cuDeviceGet\0").ok()?;
        let attr = lib.get::<CuDeviceGetAttribute>(b"cuDeviceGetAttribute\0").ok()?;
        let name_fn = lib.get::<CuDeviceGetName>(b"cuDeviceGetName\0").ok()?;
        if init(0) != 0 {
            return None;
        }
        let mut n = 0;
        if count(&mut n) != 0 || n < 1 {
            return None;
        }
        let mut dev = 0;
        if get(&mut dev, 0) != 0 {
            return None;
        }
        let (mut major, mut minor) = (0, 0);
        if attr(&mut major, COMPUTE_CAPABILITY_MAJOR, dev) != 0 || attr(&mut minor, COMPUTE_CAPABILITY_MINOR, dev) != 0
        {
            return None;
        }
        let mut buf = [0u8; 256];
        let name = if name_fn(buf.as_mut_ptr(), buf.len() as i32, dev) == 0 {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            String::from_utf8_lossy(&buf[..end]).into_owned()
        } else {
            "unknown GPU".to_string()
        };
        Some(Gpu { name, compute_capability: (major as u32, minor as u32) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nvidia_smi_output() {
        let gpu = parse_nvidia_smi("NVIDIA H200, 9.0\nNVIDIA H200, 9.0\n").unwrap();
        assert_eq!(gpu.name, "NVIDIA H200");
        assert_eq!(gpu.arch_name(), "sm_90");
        assert_eq!(parse_nvidia_smi("NVIDIA A100-SXM4-40GB, 8.0").unwrap().arch_name(), "sm_80");
        assert!(parse_nvidia_smi("").is_none());
        assert!(parse_nvidia_smi("No devices were found").is_none());
    }
}
