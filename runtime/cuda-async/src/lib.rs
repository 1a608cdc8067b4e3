//! Lazy device operations: describe GPU work now, pick a stream and run it later.
//!
//! ```no_run
//! use cuda_async::device_context::init_device_contexts;
//! use cuda_async::device_operation::DeviceOperation;
//! use cuda_async::zip;
//!
//! init_device_contexts(0, 1)?;
//! // An operation is a value; nothing runs until `.sync()` or `.await`.
//! let a = DeviceOperation::new(0, |exec| {
//!     cuda_core::DeviceBuffer::<f32>::zeroed(exec.stream(), 1024)
//! });
//! let b = DeviceOperation::value(0, 7u32);
//! let (buf, seven) = zip!(a, b).sync()?;
//! assert_eq!((buf.len(), seven), (1024, 7));
//! # Ok::<(), cuda_core::DriverError>(())
//! ```
//!
//! | module | what |
//! |---|---|
//! | [`device_box`] | [`DeviceBox`](device_box::DeviceBox): owned device memory to move into owned operations |
//! | [`device_context`] | per-device context, stream pool and scheduling policy ([`init_device_contexts`](device_context::init_device_contexts)) |
//! | [`device_operation`] | [`DeviceOperation`](device_operation::DeviceOperation): `sync`, `IntoFuture`, `and_then`, `map`, [`zip`](device_operation::zip), [`zip_all`](device_operation::zip_all) |
//! | [`scheduling_policy`] | how an operation's stream is chosen when it runs (default: round-robin) |
//! | [`timing`] | [`timed`](device_operation::DeviceOperation::timed): the GPU time of an operation |
//! | [`transfer`] | copies between pinned host memory (`cuda_core::PinnedBuffer`) and the device as operations: `upload`, `download` |
//!
//! `#[cuda_module]` generates `kernels::load_async(ordinal)`, `module.<kernel>_async(config, &a, ..)`
//! (borrows the buffers until the operation completes) and `module.<kernel>_async_owned(config, a, ..)`
//! (owns them and hands them back) when cuda-host's `async` feature is on.
#![warn(missing_docs)]

pub mod device_box;
pub mod device_context;
pub mod device_operation;
pub mod scheduling_policy;
pub mod timing;
pub mod transfer;

pub use cuda_core::DriverError;

/// Runs independent operations concurrently, each on a stream of its own, and yields their
/// outputs as a tuple: `zip!(a, b)`, `zip!(a, b, c)`, … of any number of operations (`zip!(a)`
/// is `a`). Every operation starts after the work queued before the `zip!`; none waits for
/// another.
///
/// ```no_run
/// use cuda_async::device_operation::value;
/// let (a, b, c, d, e) = cuda_async::zip!(value(1u8), value(2u16), value(3u32), value(4u64), value('5')).sync()?;
/// assert_eq!((a, b, c, d, e), (1, 2, 3, 4, '5'));
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
#[macro_export]
macro_rules! zip {
    // Folds left: the output of the operations so far is a flat tuple whose element names are
    // in the brackets; each step zips in the next operation and appends its output. A name
    // written by this macro is a fresh identifier in every step (macro hygiene), so `n` of one
    // step never shadows `n` of another.
    (@fold [$($v:ident)+] ($acc:expr) $next:expr $(, $rest:expr)*) => {
        $crate::zip!(@fold [$($v)+ n]
            ($crate::device_operation::zip($acc, $next).map(|(($($v),+), n)| ($($v,)+ n)))
            $($rest),*)
    };
    (@fold [$($v:ident)+] ($acc:expr)) => {
        $acc
    };
    ($a:expr $(,)?) => {
        $a
    };
    ($a:expr, $b:expr $(,)?) => {
        $crate::device_operation::zip($a, $b)
    };
    ($a:expr, $b:expr, $($rest:expr),+ $(,)?) => {
        $crate::zip!(@fold [a b] ($crate::device_operation::zip($a, $b)) $($rest),+)
    };
}

/// Items the code that `#[cuda_module]` generates reaches; not a stable API.
#[doc(hidden)]
pub mod __private {
    /// A kernel argument moved into a lazy operation. Kernel arguments are plain bytes for the
    /// device (a raw pointer here is a device address), so the operation may run on any thread;
    /// the value is only read there, and never dropped (kernel arguments own no host resources).
    pub struct KernelValue<T>(core::mem::ManuallyDrop<T>);

    impl<T> KernelValue<T> {
        pub fn new(value: T) -> Self {
            KernelValue(core::mem::ManuallyDrop::new(value))
        }

        pub fn get(&self) -> &T {
            &self.0
        }
    }

    // SAFETY: see the type's docs: the value is read as bytes for the launch and never dropped.
    unsafe impl<T> Send for KernelValue<T> {}
}
