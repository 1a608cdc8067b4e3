//! `Module` (device code loaded with `cuModuleLoadDataEx`) and `Function` (one kernel entry in it).

use std::ffi::{CString, c_void};
use std::mem::size_of;
use std::sync::{Arc, OnceLock};

use cudarc::driver::sys::{self, CUjit_option, CUresult};
use oxide_contract::manifest::{KernelInfo, Manifest, PayloadKind};

use crate::context::CudaContext;
use crate::driver::check;
use crate::error::DriverError;

/// Size of the buffer that receives the JIT compiler's error log.
const JIT_LOG_BYTES: usize = 16 * 1024;

struct ModuleInner {
    ctx: Arc<CudaContext>,
    raw: sys::CUmodule,
    manifest: Option<Arc<Manifest>>,
}

// SAFETY: a CUmodule may be used from any thread once its context is bound (we bind first).
unsafe impl Send for ModuleInner {}
unsafe impl Sync for ModuleInner {}

impl Drop for ModuleInner {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: we loaded this module; every Function holds an Arc to us, so none outlives it.
            let _ = unsafe { sys::cuModuleUnload(self.raw) };
        }
    }
}

/// Device code loaded into a context. Cheap to clone; unloaded when the last clone and the
/// last [`Function`] from it are dropped.
#[derive(Clone)]
pub struct Module {
    inner: Arc<ModuleInner>,
}

impl Module {
    /// Loads PTX text (JIT-compiled by the driver for this GPU).
    pub fn from_ptx(ctx: &Arc<CudaContext>, ptx: &str) -> Result<Module, DriverError> {
        Module::load(ctx, PayloadKind::Ptx, ptx.as_bytes())
    }

    /// Loads a cubin (an ELF image for exactly one SM).
    pub fn from_cubin(ctx: &Arc<CudaContext>, cubin: &[u8]) -> Result<Module, DriverError> {
        Module::load(ctx, PayloadKind::Cubin, cubin)
    }

    /// Loads a fatbin (the driver picks the image for this GPU).
    pub fn from_fatbin(ctx: &Arc<CudaContext>, fatbin: &[u8]) -> Result<Module, DriverError> {
        Module::load(ctx, PayloadKind::Fatbin, fatbin)
    }

    /// Loads a payload of the given kind. PTX gets the NUL terminator the driver needs; binary
    /// images are copied to an 8-byte-aligned buffer. LTOIR cannot be loaded directly.
    pub fn load(ctx: &Arc<CudaContext>, kind: PayloadKind, bytes: &[u8]) -> Result<Module, DriverError> {
        Module::load_impl(ctx, kind, bytes, None)
    }

    /// Like [`Module::load`], with the manifest describing the module's kernels, so that
    /// lookups list the known entries and launches are checked against parameters, launch
    /// bounds and cluster dims.
    pub fn load_with_manifest(
        ctx: &Arc<CudaContext>,
        kind: PayloadKind,
        bytes: &[u8],
        manifest: Arc<Manifest>,
    ) -> Result<Module, DriverError> {
        Module::load_impl(ctx, kind, bytes, Some(manifest))
    }

    fn load_impl(
        ctx: &Arc<CudaContext>,
        kind: PayloadKind,
        bytes: &[u8],
        manifest: Option<Arc<Manifest>>,
    ) -> Result<Module, DriverError> {
        let image: Vec<u64> = match kind {
            PayloadKind::Ptx => {
                let text = bytes.strip_suffix(&[0]).unwrap_or(bytes);
                if text.contains(&0) {
                    return Err(DriverError::Bundle { message: "PTX text contains a NUL byte".into() });
                }
                aligned_copy(text, true)
            }
            PayloadKind::Cubin | PayloadKind::Fatbin => {
                if bytes.is_empty() {
                    return Err(DriverError::Bundle { message: format!("the {kind} image is empty") });
                }
                aligned_copy(bytes, false)
            }
            PayloadKind::Ltoir => {
                return Err(DriverError::Bundle {
                    message: "LTOIR must be linked to a cubin (nvJitLink) before it can be loaded".into(),
                });
            }
        };
        ctx.bind_to_thread()?;
        let mut log = vec![0u8; JIT_LOG_BYTES];
        let mut options = [CUjit_option::CU_JIT_ERROR_LOG_BUFFER, CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
        let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), JIT_LOG_BYTES as *mut c_void];
        let mut raw = std::ptr::null_mut();
        // SAFETY: the image is complete (NUL-terminated PTX or a whole ELF/fatbin) and aligned;
        // the log buffer is as large as we say.
        let r = unsafe {
            sys::cuModuleLoadDataEx(
                &mut raw,
                image.as_ptr().cast(),
                options.len() as u32,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if r != CUresult::CUDA_SUCCESS {
            let end = log.iter().position(|b| *b == 0).unwrap_or(log.len());
            let log = String::from_utf8_lossy(&log[..end]).trim().to_string();
            let mut what = format!("loading a {kind} module");
            if !log.is_empty() {
                what.push_str(&format!(" (JIT log: {log})"));
            }
            return Err(DriverError::from_cuda(r, "cuModuleLoadDataEx").context(what));
        }
        Ok(Module { inner: Arc::new(ModuleInner { ctx: Arc::clone(ctx), raw, manifest }) })
    }

    /// The manifest, when the module came from a bundle or artifact directory.
    pub fn manifest(&self) -> Option<&Manifest> {
        self.inner.manifest.as_deref()
    }

    /// Entry names known from the manifest.
    pub fn entries(&self) -> Option<Vec<String>> {
        self.manifest().map(Manifest::entries)
    }

    /// The context the module is loaded in.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.inner.ctx
    }

    /// The kernel with PTX entry name `entry`. A missing entry gives
    /// [`DriverError::EntryNotFound`] listing the entries the module has (when known).
    pub fn function(&self, entry: &str) -> Result<Function, DriverError> {
        let not_found = || DriverError::EntryNotFound { entry: entry.to_string(), known: self.entries() };
        let raw = self.inner.entry(entry)?.ok_or_else(not_found)?;
        let info = self.manifest().and_then(|m| m.kernel(entry)).cloned().map(Arc::new);
        Ok(Function::new(Arc::clone(&self.inner), raw, entry, info))
    }
}

impl ModuleInner {
    /// The `CUfunction` of PTX entry `entry`; `None` when the module has no such entry.
    fn entry(&self, entry: &str) -> Result<Option<sys::CUfunction>, DriverError> {
        let Ok(name) = CString::new(entry) else { return Ok(None) };
        self.ctx.bind_to_thread()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the module is loaded; `name` is NUL-terminated.
        let r = unsafe { sys::cuModuleGetFunction(&mut raw, self.raw, name.as_ptr()) };
        match r {
            CUresult::CUDA_SUCCESS => Ok(Some(raw)),
            CUresult::CUDA_ERROR_NOT_FOUND => Ok(None),
            other => {
                Err(DriverError::from_cuda(other, "cuModuleGetFunction")
                    .context(format!("looking up kernel `{entry}`")))
            }
        }
    }
}

/// Module-scope variables (`ConstantMemory` statics, CUDA's `__constant__` / `__device__`).
impl Module {
    /// Device address and size in bytes of the global named `name` (`cuModuleGetGlobal`).
    pub fn global(&self, name: &str) -> Result<(u64, usize), DriverError> {
        let c_name =
            CString::new(name).map_err(|_| DriverError::invalid_config(format!("global name `{name}` has a NUL")))?;
        self.inner.ctx.bind_to_thread()?;
        let (mut ptr, mut bytes) = (0, 0);
        // SAFETY: the module is loaded; `c_name` is NUL-terminated.
        check(
            unsafe { sys::cuModuleGetGlobal_v2(&mut ptr, &mut bytes, self.inner.raw, c_name.as_ptr()) },
            "cuModuleGetGlobal",
        )
        .map_err(|e| e.context(format!("looking up the module global `{name}`")))?;
        Ok((ptr, bytes))
    }

    /// Writes `value` into the global `name`, queued on `stream` (`value` may be reused at once).
    /// Fails when the global's size differs from `T`'s.
    pub fn write_global<T: crate::DeviceCopy>(
        &self,
        stream: &crate::CudaStream,
        name: &str,
        value: &T,
    ) -> Result<(), DriverError> {
        let ptr = self.sized_global::<T>(name)?;
        crate::graph::refuse(stream.raw(), &format!("write_global of `{name}` (a copy from host memory)"))?;
        // SAFETY: the global has exactly `size_of::<T>()` bytes; pageable memory is staged.
        check(
            unsafe { sys::cuMemcpyHtoDAsync_v2(ptr, (value as *const T).cast(), size_of::<T>(), stream.raw()) },
            "cuMemcpyHtoDAsync",
        )
    }

    /// The current value of the global `name`; waits for `stream`.
    pub fn read_global<T: crate::DeviceCopy>(&self, stream: &crate::CudaStream, name: &str) -> Result<T, DriverError> {
        let ptr = self.sized_global::<T>(name)?;
        let mut out = std::mem::MaybeUninit::<T>::uninit();
        crate::graph::refuse(stream.raw(), &format!("read_global of `{name}` (a copy to host memory)"))?;
        // SAFETY: sizes agree; the stream is synchronised before `out` is read.
        check(
            unsafe { sys::cuMemcpyDtoHAsync_v2(out.as_mut_ptr().cast(), ptr, size_of::<T>(), stream.raw()) },
            "cuMemcpyDtoHAsync",
        )?;
        stream.synchronize()?;
        // SAFETY: the copy wrote all bytes, and `T: DeviceCopy` accepts any.
        Ok(unsafe { out.assume_init() })
    }

    fn sized_global<T>(&self, name: &str) -> Result<u64, DriverError> {
        let (ptr, bytes) = self.global(name)?;
        if bytes != size_of::<T>() {
            return Err(DriverError::invalid_config(format!(
                "the module global `{name}` has {bytes} bytes, but `{}` has {}",
                std::any::type_name::<T>(),
                size_of::<T>()
            )));
        }
        Ok(ptr)
    }
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module").field("device", &self.inner.ctx.ordinal()).field("entries", &self.entries()).finish()
    }
}

/// `bytes` in a u64-aligned buffer, optionally with a NUL terminator.
fn aligned_copy(bytes: &[u8], nul: bool) -> Vec<u64> {
    let len = bytes.len() + usize::from(nul);
    let mut words = vec![0u64; len.div_ceil(8)];
    // SAFETY: `words` has at least `bytes.len()` bytes; u8 has no alignment needs.
    let dst = unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), words.len() * 8) };
    dst[..bytes.len()].copy_from_slice(bytes);
    words
}

/// One kernel of a loaded [`Module`]; keeps the module loaded. Cheap to clone.
#[derive(Clone)]
pub struct Function {
    module: Arc<ModuleInner>,
    raw: sys::CUfunction,
    entry: Arc<str>,
    info: Option<Arc<KernelInfo>>,
    /// Local memory per thread, read once (every launch checks it against the stack).
    local_bytes: Arc<OnceLock<u32>>,
    /// The kernel's unchecked twin (`oxide_contract::fast_launch`), looked up at its first
    /// launch; `None` inside when the module lacks it.
    twin: Arc<OnceLock<Option<Function>>>,
}

// SAFETY: a CUfunction may be used from any thread once its context is bound (we bind first).
unsafe impl Send for Function {}
unsafe impl Sync for Function {}

impl Function {
    fn new(module: Arc<ModuleInner>, raw: sys::CUfunction, entry: &str, info: Option<Arc<KernelInfo>>) -> Function {
        Function { module, raw, entry: entry.into(), info, local_bytes: Default::default(), twin: Default::default() }
    }

    /// The kernel's unchecked twin, when its manifest entry names one and the module has it: the
    /// same kernel for the host (name, parameters, launch checks), another `CUfunction`.
    pub(crate) fn twin(&self) -> Option<&Function> {
        let fast = self.info.as_deref()?.fast.as_ref()?;
        self.twin
            .get_or_init(|| {
                let raw = self.module.entry(&fast.entry).ok()??;
                Some(Function::new(Arc::clone(&self.module), raw, &fast.entry, self.info.clone()))
            })
            .as_ref()
    }

    /// The PTX entry name.
    pub fn entry(&self) -> &str {
        &self.entry
    }

    /// The kernel's name for people: `combine::<f32, Add>` from its manifest entry
    /// ([`KernelInfo::display_name`]), or the PTX entry name when no manifest describes it.
    pub fn name(&self) -> &str {
        self.info.as_deref().map_or(&self.entry, KernelInfo::display_name)
    }

    /// The kernel's manifest entry (parameters, launch bounds, cluster dims), when known.
    pub fn info(&self) -> Option<&KernelInfo> {
        self.info.as_deref()
    }

    /// The context the function's module is loaded in.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.module.ctx
    }

    /// This function described by `info`, for a module loaded without a manifest whose kernel
    /// the binary's embedded manifests describe.
    pub(crate) fn with_info(mut self, info: &KernelInfo) -> Function {
        if self.info.is_none() {
            self.info = Some(Arc::new(info.clone()));
        }
        self
    }

    /// The raw `CUfunction`, for calling the driver directly.
    pub fn raw(&self) -> sys::CUfunction {
        self.raw
    }

    /// Local memory per thread in bytes (`FunctionAttributes::local_bytes`), read once.
    pub(crate) fn local_bytes(&self) -> Result<u32, DriverError> {
        if let Some(bytes) = self.local_bytes.get() {
            return Ok(*bytes);
        }
        let bytes = self.attributes()?.local_bytes;
        Ok(*self.local_bytes.get_or_init(|| bytes))
    }

    pub(crate) fn set_attribute(&self, attr: sys::CUfunction_attribute, value: i32) -> Result<(), DriverError> {
        // SAFETY: the function is live and its context bound by the caller.
        check(unsafe { sys::cuFuncSetAttribute(self.raw, attr, value) }, "cuFuncSetAttribute")
            .map_err(|e| e.context(format!("configuring kernel `{}`", self.name())))
    }
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Function").field("entry", &self.entry).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_copies() {
        let w = aligned_copy(b"abc", true);
        assert_eq!(w.len(), 1);
        assert_eq!(&w[0].to_le_bytes()[..4], b"abc\0");
        let w = aligned_copy(b"12345678", true);
        assert_eq!(w.len(), 2);
        let w = aligned_copy(b"12345678", false);
        assert_eq!(w.len(), 1);
    }
}
