//! Host-side loading of device code: embedded bundles, sideloaded modules, and `cuda_launch!`.
//!
//! The typed methods that `#[cuda_module]` generates are the usual way to launch kernels. This
//! crate is the layer they stand on, and the explicit path for loading a specific module:
//!
//! ```no_run
//! use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
//! use cuda_host::{cuda_launch, load_kernel_module};
//!
//! let ctx = CudaContext::new(0)?;
//! let stream = ctx.default_stream();
//! let a = DeviceBuffer::from_host(&stream, &[1.0f32; 1024])?;
//! let b = DeviceBuffer::from_host(&stream, &[2.0f32; 1024])?;
//! let mut c = DeviceBuffer::<f32>::zeroed(&stream, 1024)?;
//! let module = load_kernel_module(&ctx, "vecadd")?;
//! cuda_launch! {
//!     kernel: vecadd,
//!     stream: stream,
//!     module: module,
//!     config: LaunchConfig::for_num_elems(1024),
//!     args: [slice(a), slice(b), slice_mut(c)]
//! }?;
//! # Ok::<(), cuda_core::DriverError>(())
//! ```
#![warn(missing_docs)]

pub mod embedded;
mod generic_kernel;
#[cfg(feature = "async")]
mod launch_async;
pub mod ltoir;
mod row_width;
mod sideload;

#[allow(deprecated)] // kept for one release under its old name (CHANGELOG.md)
pub use cuda_core::load_embedded;
pub use cuda_core::{EmbeddedKernels, LoadedBundle, load_bundle};
/// `#[cuda_module]`, also importable from here (`use cuda_host::cuda_module;`) as NVIDIA
/// cuda-oxide's programs do; the same macro as `cuda_device::cuda_module`.
pub use cuda_macros::cuda_module;
pub use generic_kernel::{GenericCudaKernel, intern_entry_name};
pub use row_width::{RowWidth, RowWidthOwned};
pub use sideload::{ARTIFACT_DIR_ENV, artifact_dir_candidates, find_module_dir, load_kernel_module, load_module_dir};

use cuda_core::oxide_contract::manifest::Manifest;
use cuda_core::{DeviceBuffer, DriverError, Function, LoadedBundle as Loaded, Module};

/// Something kernels can be looked up in: a loaded bundle or module, or the embedded kernels of a
/// `#[cuda_module]`.
pub trait KernelSource {
    /// The kernel with PTX entry name `entry`.
    fn kernel_function(&self, entry: &str) -> Result<Function, DriverError>;

    /// The kernel `cuda_launch!` names: the instance with `key` when the kernel was given with
    /// type arguments (`map::<f32, F>`), else the kernel whose entry, or whose Rust name's last
    /// segment, is `name` (entries of kernels sharing a name carry their key, see
    /// `oxide_contract::naming::entry_name`).
    fn launch_function(&self, key: Option<u64>, name: &str) -> Result<Function, DriverError>;
}

/// The entry of the kernel `name` or `key` in `manifest` (see [`KernelSource::launch_function`]).
fn entry_in(manifest: &Manifest, key: Option<u64>, name: &str) -> Result<String, DriverError> {
    let not_found = || DriverError::EntryNotFound { entry: name.to_string(), known: Some(manifest.entries()) };
    match key {
        Some(key) => manifest.kernel_by_key(key).map(|k| k.entry.clone()).ok_or_else(not_found),
        None => match manifest.kernels_named(name).as_slice() {
            [one] => Ok(one.entry.clone()),
            [] => Err(not_found()),
            several => Err(cuda_core::ambiguous_kernel_name(name, several.iter().copied())),
        },
    }
}

impl KernelSource for Loaded {
    fn kernel_function(&self, entry: &str) -> Result<Function, DriverError> {
        self.function(entry)
    }

    fn launch_function(&self, key: Option<u64>, name: &str) -> Result<Function, DriverError> {
        self.function(&entry_in(self.manifest(), key, name)?)
    }
}

impl KernelSource for Module {
    fn kernel_function(&self, entry: &str) -> Result<Function, DriverError> {
        self.function(entry)
    }

    fn launch_function(&self, key: Option<u64>, name: &str) -> Result<Function, DriverError> {
        match self.manifest() {
            Some(manifest) => self.function(&entry_in(manifest, key, name)?),
            None => self.function(name),
        }
    }
}

impl KernelSource for EmbeddedKernels {
    fn kernel_function(&self, entry: &str) -> Result<Function, DriverError> {
        self.function_named(entry)
    }

    fn launch_function(&self, key: Option<u64>, name: &str) -> Result<Function, DriverError> {
        match key {
            Some(key) => self.function(key, name),
            None => self.kernel_function(name),
        }
    }
}

impl<S: KernelSource + ?Sized> KernelSource for &S {
    fn kernel_function(&self, entry: &str) -> Result<Function, DriverError> {
        (**self).kernel_function(entry)
    }

    fn launch_function(&self, key: Option<u64>, name: &str) -> Result<Function, DriverError> {
        (**self).launch_function(key, name)
    }
}

impl<S: KernelSource + ?Sized> KernelSource for std::sync::Arc<S> {
    fn kernel_function(&self, entry: &str) -> Result<Function, DriverError> {
        (**self).kernel_function(entry)
    }

    fn launch_function(&self, key: Option<u64>, name: &str) -> Result<Function, DriverError> {
        (**self).launch_function(key, name)
    }
}

/// `slice(x)` in `cuda_launch!`: called as a method, so `x` may be a `DeviceBuffer` or any
/// reference to one (auto-deref).
pub trait SliceArg {
    /// The element type of the buffer.
    type Elem;
    /// The buffer.
    fn as_buffer(&self) -> &DeviceBuffer<Self::Elem>;
}

impl<T> SliceArg for DeviceBuffer<T> {
    type Elem = T;
    fn as_buffer(&self) -> &DeviceBuffer<T> {
        self
    }
}

/// `slice_mut(x)` in `cuda_launch!`: `x` may be a mutable `DeviceBuffer` or a `&mut` to one.
pub trait SliceMutArg {
    /// The element type of the buffer.
    type Elem;
    /// The buffer, mutably.
    fn as_buffer_mut(&mut self) -> &mut DeviceBuffer<Self::Elem>;
}

impl<T> SliceMutArg for DeviceBuffer<T> {
    type Elem = T;
    fn as_buffer_mut(&mut self) -> &mut DeviceBuffer<T> {
        self
    }
}

/// Items the macros' generated code reaches; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use super::{GenericCudaKernel, KernelSource, RowWidth, RowWidthOwned, SliceArg, SliceMutArg};
    pub use cuda_core::contract::requires;
    pub use cuda_core::oxide_contract;
    pub use cuda_core::oxide_contract::manifest::LaunchBounds;
    pub use cuda_core::oxide_contract::naming::kernel_key;
    pub use cuda_core::{
        BlockRequirement, CudaContext, CudaStream, DeviceBuffer, DeviceCopy, DriverError,
        DynamicSharedMemoryRequirement, EmbeddedKernels, Function, KernelLaunchConfig, KernelLaunchContract,
        KernelParams, KernelSlice, KernelSliceMut, LaunchConfig, LaunchConfig1D, LaunchConfig2D, LaunchConfig3D,
        LaunchContractError, LaunchContractSpec, LaunchOptions, LaunchStream, LoadedBundle, Module, PreparedLaunch,
        launch_on, launch_with, launch_with_options,
    };

    /// The last segment of a kernel path as `stringify!` spells it (`kernels :: map :: < f32 >`
    /// → `map`), for lookups by name and for messages.
    pub fn kernel_name(path: &str) -> String {
        let path: String = path.chars().filter(|c| !c.is_whitespace()).collect();
        let path = path.split("::<").next().unwrap_or(&path);
        path.rsplit("::").next().unwrap_or(path).to_string()
    }

    /// The entry name of generic kernel `base`'s instance `key` as a `&'static str` (for
    /// `<kernel>_ptx_name`), made once per instance and kept for the rest of the program.
    pub fn generic_entry_name(base: &str, key: u64) -> &'static str {
        use std::collections::HashMap;
        use std::sync::{Mutex, OnceLock};
        static NAMES: OnceLock<Mutex<HashMap<u64, &'static str>>> = OnceLock::new();
        let mut names = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
        names.entry(key).or_insert_with(|| oxide_contract::naming::entry_name(base, key, false).leak())
    }

    /// The async runtime, for the `_async` methods (only with the `async` feature).
    #[cfg(feature = "async")]
    pub use cuda_async;

    /// What `cuda_launch_async!` expands to.
    #[cfg(feature = "async")]
    pub use super::launch_async::{AsyncArgs, launch_async};

    /// The stream argument of `cuda_launch!`: a `CudaStream`, `Arc<CudaStream>` or a reference.
    pub fn stream_ref<S: AsRef<CudaStream> + ?Sized>(stream: &S) -> &CudaStream {
        stream.as_ref()
    }
}

/// For a kernel by path: a call of the kernel with the launch's arguments that is never made,
/// so that type arguments written `_` (`map::<f32, _>`) are inferred from them as in a call
/// (NVIDIA's `cuda_launch!` infers them from the closure), and a wrong argument count or value
/// type is a compile error. Slices are `unreachable!()`: their element types come from the
/// kernel. Nothing for a kernel by name (`[]`).
#[doc(hidden)]
#[macro_export]
macro_rules! __infer_kernel_call {
    ([], [$($call:tt)*]) => {};
    ([$k:ident], [$($call:tt)*]) => {
        if false {
            #[allow(unused_unsafe, unreachable_code, clippy::diverging_sub_expression)]
            let _ = unsafe { $k($($call)*) };
        }
    };
}

/// Expands to its input when cuda-host's `async` feature is on, else to nothing.
///
/// A proc macro cannot see the features of the crates its output uses, so `#[cuda_module]`
/// wraps the async items it generates (`load_async`, the `_async` / `_async_owned` methods) in
/// this macro: the feature is decided where it lives, in this crate, and a user turns the
/// methods on by enabling `cuda-host/async` (or `cuda-device/async`, which forwards to it).
#[cfg(feature = "async")]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_async {
    ($($item:tt)*) => { $($item)* };
}

/// Expands to its input when cuda-host's `async` feature is on, else to nothing (it is off).
#[cfg(not(feature = "async"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_async {
    ($($item:tt)*) => {};
}

/// `cuda_launch_async!` needs cuda-host's `async` feature; without it, this says so.
#[cfg(not(feature = "async"))]
#[macro_export]
macro_rules! cuda_launch_async {
    ($($any:tt)*) => {
        ::core::compile_error!(
            "cuda_launch_async! needs cuda-host's `async` feature: cuda-host = { ..., features = [\"async\"] }"
        )
    };
}

/// Launches a kernel of an explicitly loaded module (usually from [`load_kernel_module`]).
///
/// ```text
/// cuda_launch! {
///     kernel: vecadd,                    // by name; or a path, maybe generic: kernels::scale::<f32>
///     stream: stream,                    // CudaStream, Arc<CudaStream>, or a reference
///     module: module,                    // LoadedBundle or Module (borrowed, stays usable)
///     config: LaunchConfig::for_num_elems(1024),
///     cluster_dim: (4, 1, 1),            // optional: launch with thread block clusters
///     args: [slice(a), slice(b), slice_mut(c), n, move |x: f32| x * k]
/// }
/// ```
/// `slice(buf)` / `slice_mut(buf)` pass a `DeviceBuffer` as pointer + length (for `&[T]`, and
/// for `&mut [T]` / `DisjointSlice<T>`); any other expression is passed by value as one
/// parameter (scalars, raw pointers, closures, by-value structs). Everything is borrowed.
/// Evaluates to `Result<(), DriverError>`; `Ok` means the launch was queued. When the module
/// has a manifest, the arguments are checked against the kernel's parameters before launching.
///
/// A kernel given by name (`kernel: vecadd`) need not be in scope: it is the module's entry of
/// that name, or the one kernel whose Rust name ends in it. A kernel given by path or with type
/// arguments (`kernel: kernels::scale::<f32>`) must be in scope: the launch names that instance
/// (so it is compiled) and finds it by its key, which tells apart kernels of one name in
/// different modules and every instance of a generic kernel.
#[macro_export]
macro_rules! cuda_launch {
    // A kernel by name: its entry in the module (sideloaded kernels need not be in scope).
    (
        kernel: $kernel:ident,
        stream: $stream:expr,
        module: $module:expr,
        config: $config:expr,
        $(cluster_dim: $cluster:expr,)?
        args: [$($args:tt)*] $(,)?
    ) => {
        $crate::cuda_launch!(@launch (::core::option::Option::None, ::core::stringify!($kernel)), [],
            $stream, $module, $config, [$($cluster)?], [$($args)*])
    };
    // A kernel by path, maybe with type arguments (`kernels::map::<f32>`, `map::<f32, _>`): found
    // by its key, and instantiated here, so the kernel must be in scope. `_`s are inferred from
    // the arguments, as in a call of the kernel (`@args`).
    (
        kernel: $kernel:path,
        stream: $stream:expr,
        module: $module:expr,
        config: $config:expr,
        $(cluster_dim: $cluster:expr,)?
        args: [$($args:tt)*] $(,)?
    ) => {
        $crate::cuda_launch!(@infer_launch [$kernel], $stream, $module, $config, [$($cluster)?], [$($args)*])
    };
    (@infer_launch [$($k:tt)*], $stream:expr, $module:expr, $config:expr, [$($cluster:expr)?], [$($args:tt)*]) => {{
        // Naming the instance puts it among this crate's mono items, so it is compiled.
        let __kernel = $($k)*;
        let _ = ::core::hint::black_box(__kernel as *const ());
        let __key = $crate::__private::kernel_key(&__kernel);
        $crate::cuda_launch!(@launch (::core::option::Option::Some(__key), ::core::stringify!($($k)*)), [__kernel],
            $stream, $module, $config, [$($cluster)?], [$($args)*])
    }};
    (@launch ($key:expr, $path:expr), $infer:tt, $stream:expr, $module:expr, $config:expr, [$($cluster:expr)?], [$($args:tt)*]) => {{
        let __stream = &$stream;
        let __module = &$module;
        let __config: $crate::__private::LaunchConfig = $config;
        let __cluster: ::core::option::Option<(u32, u32, u32)> = ::core::option::Option::None
            $(.or(::core::option::Option::Some($cluster)))?;
        let __name = $crate::__private::kernel_name($path);
        match $crate::__private::KernelSource::launch_function(__module, $key, &__name) {
            ::core::result::Result::Err(__e) => ::core::result::Result::Err(__e),
            ::core::result::Result::Ok(__function) => {
                let mut __params = $crate::__private::KernelParams::new();
                $crate::cuda_launch!(@args __params, $infer, [
                    __a0 __a1 __a2 __a3 __a4 __a5 __a6 __a7 __a8 __a9 __a10 __a11 __a12 __a13 __a14 __a15
                    __a16 __a17 __a18 __a19 __a20 __a21 __a22 __a23 __a24 __a25 __a26 __a27 __a28 __a29 __a30 __a31
                ], [], [], [], $($args)*);
                // SAFETY: the packet follows the kernel ABI (contract §4) and is checked against
                // the kernel's manifest entry when the module has one.
                unsafe {
                    $crate::__private::launch_with(
                        &__function,
                        $crate::__private::stream_ref(__stream),
                        &__config,
                        __cluster,
                        &mut __params,
                    )
                }
            }
        }
    }};
    // Each argument is bound to the next name of the list, in order: all bindings, then (for a
    // kernel by path) a call of the kernel that is never made, then the pushes onto the packet.
    (@args $p:ident, $infer:tt, [$($names:ident)*], [$($lets:tt)*], [$($pushes:tt)*], [$($call:tt)*] $(,)?) => {
        $($lets)*
        $crate::__infer_kernel_call!($infer, [$($call)*]);
        $($pushes)*
    };
    (@args $p:ident, $infer:tt, [$n:ident $($names:ident)*], [$($lets:tt)*], [$($pushes:tt)*], [$($call:tt)*],
        slice($e:expr) $(, $($rest:tt)*)?) => {
        $crate::cuda_launch!(@args $p, $infer, [$($names)*],
            [$($lets)* let $n = { use $crate::__private::SliceArg as _; ($e).as_buffer() };],
            [$($pushes)* $p.push_slice($n);],
            [$($call)* ::core::unreachable!(),],
            $($($rest)*)?)
    };
    (@args $p:ident, $infer:tt, [$n:ident $($names:ident)*], [$($lets:tt)*], [$($pushes:tt)*], [$($call:tt)*],
        slice_mut($e:expr) $(, $($rest:tt)*)?) => {
        $crate::cuda_launch!(@args $p, $infer, [$($names)*],
            [$($lets)* let $n = { use $crate::__private::SliceMutArg as _; ($e).as_buffer_mut() };],
            [$($pushes)* $p.push_slice_mut($n);],
            [$($call)* ::core::unreachable!(),],
            $($($rest)*)?)
    };
    (@args $p:ident, $infer:tt, [$n:ident $($names:ident)*], [$($lets:tt)*], [$($pushes:tt)*], [$($call:tt)*],
        $e:expr $(, $($rest:tt)*)?) => {
        $crate::cuda_launch!(@args $p, $infer, [$($names)*],
            [$($lets)* let $n = &$e;],
            [$($pushes)* $p.push_value($n);],
            // SAFETY (of the call that is never made): it only gives the argument's type.
            [$($call)* unsafe { ::core::ptr::read($n) },],
            $($($rest)*)?)
    };
}
