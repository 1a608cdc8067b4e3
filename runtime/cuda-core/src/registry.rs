//! Every device code bundle linked into this binary, and its kernels by key.
//!
//! `oxide-rustc` puts each crate's bundle into the section `cuda_oxide_bundles`; the linker places
//! them one after another and defines `__start_`/`__stop_` symbols around them. A kernel instance
//! may live in the bundle of any crate (a generic kernel's instance is compiled by the crate that
//! instantiates it), so the generated launch methods find kernels here by their key
//! (`oxide_contract::naming::kernel_key`), not by the crate that defines them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use oxide_contract::bundle::{Bundle, parse_section};
use oxide_contract::manifest::KernelInfo;

use crate::bundle::LoadedBundle;
use crate::context::CudaContext;
use crate::error::DriverError;
use crate::module::{Function, Module};
use cudarc::driver::sys::CUresult;

unsafe extern "C" {
    #[link_name = "__start_cuda_oxide_bundles"]
    static SECTION_START: u8;
    #[link_name = "__stop_cuda_oxide_bundles"]
    static SECTION_STOP: u8;
}

/// Zero bytes in the bundle section, so that it exists (and the linker defines its start and
/// stop symbols) in every binary that links this crate, with kernels or without.
#[used]
#[unsafe(link_section = "cuda_oxide_bundles")]
static SECTION_MARKER: [u8; 16] = [0; 16];

/// The bytes of this binary's bundle section: every bundle it links, and padding.
pub(crate) fn section() -> &'static [u8] {
    let _ = &SECTION_MARKER;
    // SAFETY: the linker defines both symbols at the start and end of one section of this
    // binary, which lives as long as the program and is never written.
    unsafe {
        let start = &raw const SECTION_START;
        let stop = &raw const SECTION_STOP;
        std::slice::from_raw_parts(start, (stop as usize).saturating_sub(start as usize))
    }
}

/// The bundles of this binary, parsed once.
fn bundles() -> Result<&'static [Bundle<'static>], DriverError> {
    static BUNDLES: OnceLock<Result<Vec<Bundle<'static>>, DriverError>> = OnceLock::new();
    let parsed = BUNDLES.get_or_init(|| parse_section(section()).map_err(DriverError::from));
    match parsed {
        Ok(bundles) => Ok(bundles),
        Err(e) => Err(e.clone()),
    }
}

/// Where kernel instance `key` is: the index of its bundle and its manifest entry.
fn find(key: u64) -> Result<Option<(usize, &'static KernelInfo)>, DriverError> {
    Ok(bundles()?.iter().enumerate().find_map(|(i, b)| b.manifest.kernel_by_key(key).map(|k| (i, k))))
}

/// The kernels of one `#[cuda_module]` on one context, as its generated `Module` finds them: by
/// key, in whichever bundle of the binary holds each one, or in one module the program loaded
/// itself (`kernels::from_module`). It keeps the bundles it loaded, and remembers the instances
/// of generic kernels it has looked up.
pub struct EmbeddedKernels {
    ctx: Arc<CudaContext>,
    /// The module given to `from_module`: a kernel it holds comes from it; one it lacks from the
    /// binary's bundle of that kernel (see [`from_module`](Self::from_module)).
    module: Option<Arc<Module>>,
    bundles: Mutex<Vec<Arc<LoadedBundle>>>,
    instances: Mutex<HashMap<u64, Function>>,
}

impl EmbeddedKernels {
    /// The kernels of this binary on `ctx`. Errors with [`DriverError::NotBuiltWithOxide`] when the
    /// binary holds no device code (a plain `cargo build`).
    pub fn new(ctx: &Arc<CudaContext>) -> Result<EmbeddedKernels, DriverError> {
        if bundles()?.is_empty() {
            return Err(DriverError::NotBuiltWithOxide);
        }
        Ok(EmbeddedKernels {
            ctx: Arc::clone(ctx),
            module: None,
            bundles: Mutex::new(Vec::new()),
            instances: Default::default(),
        })
    }

    /// The kernels of `module`, loaded by the program (e.g. from the `<crate>.ptx` that
    /// `cargo oxide build` writes, with `CudaContext::load_module_from_file`). Each kernel is
    /// looked up by the entry name the manifests give its key (the module's own, else the
    /// binary's embedded ones), else by the name the compiler gives a kernel without a clash:
    /// its Rust name, or for an instance of a generic kernel that name and its key.
    ///
    /// A kernel the module lacks but the binary embeds comes from the binary's bundle: device
    /// code is kept per crate (an instance of a generic kernel in the bundle of the crate that
    /// instantiated it), so a module of one crate — a `<crate>.ptx`, or one bundle's module —
    /// need not hold every kernel of a `#[cuda_module]`. Only a kernel found in neither is an
    /// error (`CUDA_ERROR_NOT_FOUND`, as in NVIDIA's cuda-oxide).
    pub fn from_module(module: Arc<Module>) -> EmbeddedKernels {
        EmbeddedKernels {
            ctx: Arc::clone(module.context()),
            module: Some(module),
            bundles: Mutex::new(Vec::new()),
            instances: Default::default(),
        }
    }

    /// The same device code for another generated `Module` (a nested module's `from_parent`):
    /// the same context, program-loaded module and loaded bundles, and a cache of its own.
    pub fn share(&self) -> EmbeddedKernels {
        let bundles = self.bundles.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        EmbeddedKernels {
            ctx: Arc::clone(&self.ctx),
            module: self.module.clone(),
            bundles: Mutex::new(bundles),
            instances: Default::default(),
        }
    }

    /// The kernel instance with `key` (`oxide_contract::naming::kernel_key`); `kernel` (its Rust
    /// path) names it in errors.
    pub fn function(&self, key: u64, kernel: &str) -> Result<Function, DriverError> {
        let mut instances = self.instances.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(f) = instances.get(&key) {
            return Ok(f.clone());
        }
        if let Some(module) = &self.module {
            match function_in_module(module, key, kernel) {
                Ok(f) => {
                    instances.insert(key, f.clone());
                    return Ok(f);
                }
                // Not in the program's module: the binary's own copy, if it embeds one.
                Err(e @ DriverError::EntryNotFound { .. }) if !matches!(find(key), Ok(Some(_))) => return Err(e),
                Err(DriverError::EntryNotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        let Some((index, info)) = find(key)? else {
            let known = bundles()?.iter().flat_map(|b| b.manifest.kernels.iter().map(|k| k.name.clone())).collect();
            return Err(DriverError::KernelNotLinked { kernel: kernel.to_string(), known });
        };
        let loaded = self.ctx.embedded_bundle(index, || LoadedBundle::load(&self.ctx, &bundles()?[index]))?;
        let f = loaded.function(&info.entry)?;
        let mut kept = self.bundles.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !kept.iter().any(|b| Arc::ptr_eq(b, &loaded)) {
            kept.push(loaded);
        }
        instances.insert(key, f.clone());
        Ok(f)
    }

    /// The kernel named `name` (its entry, or its Rust name's last segment) in any bundle of this
    /// binary (or in the module given to [`from_module`](Self::from_module)), as `cuda_launch!`
    /// finds a kernel given by name.
    pub fn function_named(&self, name: &str) -> Result<Function, DriverError> {
        if let Some(module) = &self.module {
            let info = module.manifest().map(|m| m.kernels_named(name));
            return match info.as_deref() {
                Some([one]) => module.function(&one.entry),
                Some(several @ [_, _, ..]) => Err(ambiguous_kernel_name(name, several.iter().copied())),
                _ => module.function(name),
            };
        }
        let bundles = bundles()?;
        let found: Vec<(usize, &KernelInfo)> = bundles
            .iter()
            .enumerate()
            .flat_map(|(i, b)| b.manifest.kernels_named(name).into_iter().map(move |k| (i, k)))
            .collect();
        match found.as_slice() {
            [(_, info)] => self.function(info.key, &info.name),
            [] => Err(DriverError::EntryNotFound {
                entry: name.to_string(),
                known: Some(bundles.iter().flat_map(|b| b.manifest.entries()).collect()),
            }),
            several => Err(ambiguous_kernel_name(name, several.iter().map(|(_, k)| *k))),
        }
    }

    /// The kernel entry `entry` of the device code of crate `crate_name`, looked up by name only:
    /// for a CUDA C++ `__global__` function linked in from the crate's `cuda-sources`, which no
    /// manifest lists (docs/interop.md). Launch it with [`crate::launch`], whose packet must match
    /// its C++ parameters.
    pub fn cuda_cpp_entry(&self, crate_name: &str, entry: &str) -> Result<Function, DriverError> {
        let bundles = bundles()?;
        let Some(index) = bundles.iter().position(|b| b.manifest.crate_name == crate_name) else {
            return Err(DriverError::Bundle {
                message: format!(
                    "this binary holds no device code of crate `{crate_name}` (crates with device code: {})",
                    bundles.iter().map(|b| b.manifest.crate_name.as_str()).collect::<Vec<_>>().join(", ")
                ),
            });
        };
        let loaded = self.ctx.embedded_bundle(index, || LoadedBundle::load(&self.ctx, &bundles[index]))?;
        let f = loaded.function(entry)?;
        let mut kept = self.bundles.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !kept.iter().any(|b| Arc::ptr_eq(b, &loaded)) {
            kept.push(loaded);
        }
        Ok(f)
    }

    /// Writes `value` into the `ConstantMemory` static named `static_name` (`#[cuda_module]`'s
    /// generated `set_<name>`), queued on `stream`: in the module given to
    /// [`from_module`](Self::from_module), else in every bundle of this binary whose device code
    /// has it (each crate whose kernels read the static has its own copy). The bundles written
    /// stay loaded with this value for this module's kernels. A static no kernel reads has no
    /// device copy, and writing it does nothing; a value whose size differs from the static's
    /// is an error.
    pub fn write_constant<T: crate::DeviceCopy>(
        &self,
        stream: &crate::CudaStream,
        static_name: &str,
        value: &T,
    ) -> Result<(), DriverError> {
        self.write_every_copy(stream, &oxide_contract::naming::constant_symbol(static_name), value).map(drop)
    }

    /// Writes `value` into the module-scope global `name` (a `ConstantMemory` static by its item
    /// name, as `cuda_core::Module::write_global` takes it), queued on `stream`, wherever this
    /// module's device code has it (see [`write_constant`](Self::write_constant)). Unlike the
    /// typed setter it is an error when no device code has the global: a misspelt name, or a
    /// static that no kernel reads.
    pub fn write_global<T: crate::DeviceCopy>(
        &self,
        stream: &crate::CudaStream,
        name: &str,
        value: &T,
    ) -> Result<(), DriverError> {
        match self.write_every_copy(stream, name, value)? {
            0 => Err(self.no_global(name)),
            _ => Ok(()),
        }
    }

    /// The current value of the module-scope global `name` (as [`write_global`](Self::write_global)
    /// finds it; with several copies, the first bundle's); waits for `stream`.
    pub fn read_global<T: crate::DeviceCopy>(&self, stream: &crate::CudaStream, name: &str) -> Result<T, DriverError> {
        if let Some(module) = &self.module {
            return module.read_global(stream, name);
        }
        for index in 0..bundles()?.len() {
            let loaded = self.ctx.embedded_bundle(index, || LoadedBundle::load(&self.ctx, &bundles()?[index]))?;
            match loaded.module().global(name) {
                Ok(_) => return loaded.module().read_global(stream, name),
                Err(e) if e.code() == Some(CUresult::CUDA_ERROR_NOT_FOUND as u32) => {}
                Err(e) => return Err(e),
            }
        }
        Err(self.no_global(name))
    }

    /// Writes `value` into global `symbol` of every device code that has it; how many did.
    fn write_every_copy<T: crate::DeviceCopy>(
        &self,
        stream: &crate::CudaStream,
        symbol: &str,
        value: &T,
    ) -> Result<usize, DriverError> {
        // `Ok(false)`: this device code has no such global.
        let write = |module: &Module| match module.global(symbol) {
            Ok(_) => module.write_global(stream, symbol, value).map(|()| true),
            Err(e) if e.code() == Some(CUresult::CUDA_ERROR_NOT_FOUND as u32) => Ok(false),
            Err(e) => Err(e),
        };
        if let Some(module) = &self.module {
            return write(module).map(usize::from);
        }
        let mut written = 0;
        for index in 0..bundles()?.len() {
            let loaded = self.ctx.embedded_bundle(index, || LoadedBundle::load(&self.ctx, &bundles()?[index]))?;
            if write(loaded.module())? {
                written += 1;
                let mut kept = self.bundles.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                if !kept.iter().any(|b| Arc::ptr_eq(b, &loaded)) {
                    kept.push(loaded);
                }
            }
        }
        Ok(written)
    }

    /// The error for a global that no device code of this module has.
    fn no_global(&self, name: &str) -> DriverError {
        DriverError::invalid_config(format!(
            "no device code of this module has a global `{name}`: a `ConstantMemory` static is in the \
             device code only when a kernel reads it, under its item name"
        ))
    }

    /// The context the kernels are loaded on.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The bundles loaded so far, with their manifests and the payload chosen for this GPU.
    pub fn loaded_bundles(&self) -> Vec<Arc<LoadedBundle>> {
        self.bundles.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

/// Kernel instance `key` (Rust path `kernel`) in a module the program loaded itself.
fn function_in_module(module: &Module, key: u64, kernel: &str) -> Result<Function, DriverError> {
    if let Some(info) = module.manifest().and_then(|m| m.kernel_by_key(key)) {
        return module.function(&info.entry);
    }
    // A module without a manifest (a file): the binary's manifests name the entry, when the
    // kernel was compiled into it.
    if let Some((_, info)) = find(key).ok().flatten() {
        return module.function(&info.entry).map(|f| f.with_info(info));
    }
    let base = kernel.rsplit("::").next().unwrap_or(kernel);
    let hashed = oxide_contract::naming::entry_name(base, key, false);
    match module.function(base) {
        Err(DriverError::EntryNotFound { .. }) => module.function(&hashed),
        found => found,
    }
}

impl std::fmt::Debug for EmbeddedKernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedKernels").field("device", &self.ctx.ordinal()).finish_non_exhaustive()
    }
}

/// The error for a kernel name that several kernels answer to.
pub fn ambiguous_kernel_name<'a>(name: &str, kernels: impl Iterator<Item = &'a KernelInfo>) -> DriverError {
    let list: Vec<String> = kernels.map(|k| format!("`{}` (entry {})", k.name, k.entry)).collect();
    DriverError::Artifact {
        message: format!(
            "kernel name `{name}` is ambiguous: {}; name the kernel by its path (`kernel: kernels::{name}`)",
            list.join(", ")
        ),
    }
}

/// The manifests of every bundle in this binary (empty when it was not built by `cargo oxide`).
pub fn embedded_manifests() -> Result<Vec<&'static oxide_contract::manifest::Manifest>, DriverError> {
    Ok(bundles()?.iter().map(|b| &b.manifest).collect())
}
