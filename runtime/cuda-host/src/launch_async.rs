//! `cuda_launch_async!`: the raw asynchronous launch kept for code migrating from NVIDIA's
//! cuda-oxide (the seed chapter's low-level migration API), and what its expansion calls.

use std::mem::ManuallyDrop;

use cuda_async::__private::KernelValue;
use cuda_async::device_context::default_device;
use cuda_async::device_operation::DeviceOperation;
use cuda_core::{DeviceBuffer, DriverError, Function, KernelParams, LaunchConfig, launch_with};

/// Launches a kernel of an explicitly loaded module *lazily*: evaluates to a
/// `DeviceOperation` that queues the launch when it runs (`.sync()`, `.sync_on(&stream)`,
/// `.await`), on the stream the scheduling policy picks then. The form is that of
/// [`cuda_launch!`](crate::cuda_launch) without `stream:`; needs cuda-host's `async` feature.
///
/// ```no_run
/// use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
/// use cuda_host::{cuda_launch_async, load_kernel_module};
///
/// cuda_async::device_context::init_device_contexts(0, 1)?;
/// let ctx = CudaContext::new(0)?;
/// let stream = ctx.default_stream();
/// let module = load_kernel_module(&ctx, "vecadd")?;
/// let a = DeviceBuffer::from_host(&stream, &[1.0f32; 1024])?;
/// let b = DeviceBuffer::from_host(&stream, &[2.0f32; 1024])?;
/// let mut c = DeviceBuffer::<f32>::zeroed(&stream, 1024)?;
/// // SAFETY: `a`, `b` and `c` live until the operation has completed (`.sync()` below).
/// let op = unsafe {
///     cuda_launch_async! {
///         kernel: vecadd,
///         module: module,
///         config: LaunchConfig::for_num_elems(1024),
///         args: [slice(a), slice(b), slice_mut(c)]
///     }
/// };
/// op.sync()?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// # Safety
/// The operation keeps the buffers' *device addresses*, not the buffers: it borrows nothing, so
/// Rust does not stop you from freeing a buffer and running the operation later, when the kernel
/// would read and write freed memory (or memory that has been handed out again). The caller must
/// ensure that every buffer passed outlives the operation's completion. The typed methods that
/// `#[cuda_module]` generates (`<kernel>_async`, which borrows the buffers until the operation
/// completes, and `<kernel>_async_owned`, which owns them) make that a compile-time check;
/// prefer them in new code. As with [`cuda_launch!`](crate::cuda_launch), when the module has no
/// manifest (a module loaded from a file), the arguments must also match the kernel's
/// parameters in number, order and type.
///
/// Values (scalars, closures, by-value structs) are moved into the operation. A lookup error
/// (no such kernel) is reported when the operation runs.
#[cfg(feature = "async")]
#[macro_export]
macro_rules! cuda_launch_async {
    // A kernel by name: its entry in the module (sideloaded kernels need not be in scope).
    (
        kernel: $kernel:ident,
        module: $module:expr,
        config: $config:expr,
        $(cluster_dim: $cluster:expr,)?
        args: [$($args:tt)*] $(,)?
    ) => {
        $crate::cuda_launch_async!(@launch (::core::option::Option::None, ::core::stringify!($kernel)), [],
            $module, $config, [$($cluster)?], [$($args)*])
    };
    // A kernel by path, maybe with type arguments: found by its key, `_`s inferred from the
    // arguments, as in `cuda_launch!`.
    (
        kernel: $kernel:path,
        module: $module:expr,
        config: $config:expr,
        $(cluster_dim: $cluster:expr,)?
        args: [$($args:tt)*] $(,)?
    ) => {
        $crate::cuda_launch_async!(@infer_launch [$kernel], $module, $config, [$($cluster)?], [$($args)*])
    };
    (@infer_launch [$($k:tt)*], $module:expr, $config:expr, [$($cluster:expr)?], [$($args:tt)*]) => {{
        let __kernel = $($k)*;
        let _ = ::core::hint::black_box(__kernel as *const ());
        let __key = $crate::__private::kernel_key(&__kernel);
        $crate::cuda_launch_async!(@launch (::core::option::Option::Some(__key), ::core::stringify!($($k)*)), [__kernel],
            $module, $config, [$($cluster)?], [$($args)*])
    }};
    (@launch ($key:expr, $path:expr), $infer:tt, $module:expr, $config:expr, [$($cluster:expr)?], [$($args:tt)*]) => {{
        let __module = &$module;
        let __config: $crate::__private::LaunchConfig = $config;
        let __cluster: ::core::option::Option<(u32, u32, u32)> = ::core::option::Option::None
            $(.or(::core::option::Option::Some($cluster)))?;
        let __name = $crate::__private::kernel_name($path);
        let __function = $crate::__private::KernelSource::launch_function(__module, $key, &__name);
        let mut __args = $crate::__private::AsyncArgs::new();
        $crate::cuda_launch_async!(@args __args, $infer, [
            __a0 __a1 __a2 __a3 __a4 __a5 __a6 __a7 __a8 __a9 __a10 __a11 __a12 __a13 __a14 __a15
            __a16 __a17 __a18 __a19 __a20 __a21 __a22 __a23 __a24 __a25 __a26 __a27 __a28 __a29 __a30 __a31
        ], [], [], [], $($args)*);
        $crate::__private::launch_async(__function, __config, __cluster, __args)
    }};
    // As `cuda_launch!`'s `@args`; value arguments move into the operation.
    (@args $a:ident, $infer:tt, [$($names:ident)*], [$($lets:tt)*], [$($pushes:tt)*], [$($call:tt)*] $(,)?) => {
        $($lets)*
        $crate::__infer_kernel_call!($infer, [$($call)*]);
        $($pushes)*
    };
    (@args $a:ident, $infer:tt, [$n:ident $($names:ident)*], [$($lets:tt)*], [$($pushes:tt)*], [$($call:tt)*],
        slice($e:expr) $(, $($rest:tt)*)?) => {
        $crate::cuda_launch_async!(@args $a, $infer, [$($names)*],
            [$($lets)* let $n = { use $crate::__private::SliceArg as _; ($e).as_buffer() };],
            [$($pushes)* $a.slice($n);],
            [$($call)* ::core::unreachable!(),],
            $($($rest)*)?)
    };
    (@args $a:ident, $infer:tt, [$n:ident $($names:ident)*], [$($lets:tt)*], [$($pushes:tt)*], [$($call:tt)*],
        slice_mut($e:expr) $(, $($rest:tt)*)?) => {
        $crate::cuda_launch_async!(@args $a, $infer, [$($names)*],
            [$($lets)* let $n = { use $crate::__private::SliceMutArg as _; ($e).as_buffer_mut() };],
            [$($pushes)* $a.slice($n);],
            [$($call)* ::core::unreachable!(),],
            $($($rest)*)?)
    };
    (@args $a:ident, $infer:tt, [$n:ident $($names:ident)*], [$($lets:tt)*], [$($pushes:tt)*], [$($call:tt)*],
        $e:expr $(, $($rest:tt)*)?) => {
        $crate::cuda_launch_async!(@args $a, $infer, [$($names)*],
            [$($lets)* let $n = $e;],
            [$($pushes)* $a.value($n);],
            // SAFETY (of the call that is never made): it only gives the argument's type.
            [$($call)* unsafe { ::core::ptr::read(&$n) },],
            $($($rest)*)?)
    };
}

/// The arguments of a `cuda_launch_async!`, kept until the launch.
#[doc(hidden)]
pub struct AsyncArgs<'a> {
    args: Vec<Box<dyn AsyncArg + Send + 'a>>,
}

/// One kept argument: pushes itself onto the packet.
trait AsyncArg {
    fn push<'p>(&'p self, params: &mut KernelParams<'p>);
}

/// A slice argument: the buffer's address and length, as a buffer that never frees (the real
/// one does). Its element type is irrelevant to the packet (pointer + u64 length).
struct RawSlice(ManuallyDrop<DeviceBuffer<u8>>);

// SAFETY: a device address, a length and an `Arc` of the (thread-safe) context.
unsafe impl Send for RawSlice {}

impl AsyncArg for RawSlice {
    fn push<'p>(&'p self, params: &mut KernelParams<'p>) {
        params.push_slice(&self.0);
    }
}

impl<T> AsyncArg for KernelValue<T> {
    fn push<'p>(&'p self, params: &mut KernelParams<'p>) {
        params.push_value(self.get());
    }
}

impl<'a> AsyncArgs<'a> {
    #[allow(clippy::new_without_default)]
    pub fn new() -> AsyncArgs<'a> {
        AsyncArgs { args: Vec::new() }
    }

    /// `slice(buf)` / `slice_mut(buf)`: keeps the address and length only (see the macro's Safety).
    pub fn slice<T>(&mut self, buf: &DeviceBuffer<T>) {
        // SAFETY: the view is never dropped (ManuallyDrop), so it never frees the memory it
        // shares with `buf`; it only lends its address and length fields to the packet.
        let view = unsafe { DeviceBuffer::<u8>::from_raw_parts(buf.cu_deviceptr(), buf.len(), buf.context().clone()) };
        self.args.push(Box::new(RawSlice(ManuallyDrop::new(view))));
    }

    /// Any other argument, moved in and passed by value.
    pub fn value<T: 'a>(&mut self, value: T) {
        self.args.push(Box::new(KernelValue::new(value)));
    }
}

/// What `cuda_launch_async!` expands to: the lazy launch.
///
/// # Safety
/// See the macro: the buffers behind the slice arguments must outlive the operation's
/// completion, and without a manifest the arguments must match the kernel's parameters.
#[doc(hidden)]
pub unsafe fn launch_async<'a>(
    function: Result<Function, DriverError>,
    config: LaunchConfig,
    cluster: Option<(u32, u32, u32)>,
    args: AsyncArgs<'a>,
) -> DeviceOperation<'a, ()> {
    let device = function.as_ref().map_or_else(|_| default_device(), |f| f.context().ordinal());
    DeviceOperation::new(device, move |exec| {
        let function = function?;
        let mut params = KernelParams::new();
        for arg in &args.args {
            arg.push(&mut params);
        }
        // SAFETY: forwarded to the caller of the macro (buffers alive, packet matches); the
        // packet borrows `args`, which lives until the launch call returns.
        unsafe { launch_with(&function, exec.stream(), &config, cluster, &mut params) }
    })
}
