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

pub mod embedded;
mod generic_kernel;
#[cfg(feature = "async")]
mod launch_async;
pub mod ltoir;
mod sideload;

pub use cuda_core::{LoadedBundle, load_bundle, load_embedded};
pub use generic_kernel::{GenericCudaKernel, intern_entry_name};
pub use sideload::{ARTIFACT_DIR_ENV, artifact_dir_candidates, find_module_dir, load_kernel_module, load_module_dir};

use cuda_core::{DeviceBuffer, DriverError, Function, LoadedBundle as Loaded, Module};

/// Something kernels can be looked up in by PTX entry name: a loaded bundle or module.
pub trait KernelSource {
    /// The kernel with PTX entry name `entry`.
    fn kernel_function(&self, entry: &str) -> Result<Function, DriverError>;
}

impl KernelSource for Loaded {
    fn kernel_function(&self, entry: &str) -> Result<Function, DriverError> {
        self.function(entry)
    }
}

impl KernelSource for Module {
    fn kernel_function(&self, entry: &str) -> Result<Function, DriverError> {
        self.function(entry)
    }
}

impl<S: KernelSource + ?Sized> KernelSource for &S {
    fn kernel_function(&self, entry: &str) -> Result<Function, DriverError> {
        (**self).kernel_function(entry)
    }
}

impl<S: KernelSource + ?Sized> KernelSource for std::sync::Arc<S> {
    fn kernel_function(&self, entry: &str) -> Result<Function, DriverError> {
        (**self).kernel_function(entry)
    }
}

/// `slice(x)` in `cuda_launch!`: called as a method, so `x` may be a `DeviceBuffer` or any
/// reference to one (auto-deref).
pub trait SliceArg {
    type Elem;
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
    type Elem;
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
    pub use super::{KernelSource, SliceArg, SliceMutArg};
    pub use cuda_core::oxide_contract;
    pub use cuda_core::oxide_contract::manifest::LaunchBounds;
    pub use cuda_core::{
        CudaContext, CudaStream, DeviceBuffer, DriverError, Function, KernelParams, LaunchConfig, LoadedBundle,
        launch_with, load_embedded,
    };

    pub use cuda_core::oxide_contract::naming::{entry_name, type_key};

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
///     kernel: vecadd,                    // entry name; generic: scale::<f32>
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
#[macro_export]
macro_rules! cuda_launch {
    (
        kernel: $kernel:ident $(::<$($ty:ty),+ $(,)?>)?,
        stream: $stream:expr,
        module: $module:expr,
        config: $config:expr,
        $(cluster_dim: $cluster:expr,)?
        args: [$($args:tt)*] $(,)?
    ) => {{
        let __stream = &$stream;
        let __module = &$module;
        let __config: $crate::__private::LaunchConfig = $config;
        let __cluster: ::core::option::Option<(u32, u32, u32)> = ::core::option::Option::None
            $(.or(::core::option::Option::Some($cluster)))?;
        let __entry = $crate::__private::entry_name(
            ::core::stringify!($kernel),
            &[$($($crate::__private::type_key::<$ty>()),+)?],
        );
        match $crate::__private::KernelSource::kernel_function(__module, &__entry) {
            ::core::result::Result::Err(__e) => ::core::result::Result::Err(__e),
            ::core::result::Result::Ok(__function) => {
                let mut __params = $crate::__private::KernelParams::new();
                $crate::cuda_launch!(@push __params; $($args)*);
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
    (@push $p:ident;) => {};
    (@push $p:ident; slice($e:expr) $(, $($rest:tt)*)?) => {
        let __arg = {
            use $crate::__private::SliceArg as _;
            ($e).as_buffer()
        };
        $p.push_slice(__arg);
        $crate::cuda_launch!(@push $p; $($($rest)*)?);
    };
    (@push $p:ident; slice_mut($e:expr) $(, $($rest:tt)*)?) => {
        let __arg = {
            use $crate::__private::SliceMutArg as _;
            ($e).as_buffer_mut()
        };
        $p.push_slice_mut(__arg);
        $crate::cuda_launch!(@push $p; $($($rest)*)?);
    };
    (@push $p:ident; $e:expr $(, $($rest:tt)*)?) => {
        let __arg = &$e;
        $p.push_value(__arg);
        $crate::cuda_launch!(@push $p; $($($rest)*)?);
    };
}
