//! `DeviceOperation`: a lazy piece of GPU work, run by `.sync()` or `.await` on a stream that the
//! scheduling policy picks at that moment; composed with `and_then`, `map` and `zip`.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};

use cuda_core::{CudaEvent, CudaStream, DriverError};

use crate::device_context::{DeviceContext, default_device, device_context};

/// Where an operation is being enqueued: a device and one stream of its pool.
pub struct ExecutionContext {
    device: Arc<DeviceContext>,
    stream: Arc<CudaStream>,
}

impl ExecutionContext {
    pub(crate) fn new(device: Arc<DeviceContext>, stream: Arc<CudaStream>) -> ExecutionContext {
        ExecutionContext { device, stream }
    }

    /// The stream to enqueue work on. Work must only be queued here (never waited for): the
    /// runtime waits for the whole operation once it is enqueued.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The device the operation runs on.
    pub fn device(&self) -> &Arc<DeviceContext> {
        &self.device
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.device.ordinal()
    }

    /// Makes the device's context current on this thread, for work that calls the driver
    /// directly ([`DeviceOperation::new`] and [`with_context`] do it before calling their closure).
    pub fn bind(&self) -> Result<(), DriverError> {
        self.device.context().bind_to_thread()
    }

    /// Another stream of this device, chosen by its policy, for work that may overlap this
    /// one's: [`fork_on`](Self::fork_on) of this device. Under a policy that picks one stream
    /// ([`SingleStream`](crate::scheduling_policy::SingleStream)) it is this same stream, so the
    /// work queued on both runs in order, and [`join`](Self::join) does nothing.
    ///
    /// ```no_run
    /// use cuda_async::device_operation::DeviceOperation;
    /// let op = DeviceOperation::new(0, |exec| {
    ///     let side = exec.fork()?;
    ///     let a = cuda_core::DeviceBuffer::<u8>::zeroed(side.stream(), 1 << 20)?; // overlaps…
    ///     let b = cuda_core::DeviceBuffer::<u8>::zeroed(exec.stream(), 1 << 20)?; // …this
    ///     exec.join(&side)?; // the operation completes after both
    ///     Ok((a, b))
    /// });
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn fork(&self) -> Result<ExecutionContext, DriverError> {
        self.fork_on(self.ordinal())
    }

    /// Another stream of device `ordinal`, chosen by its policy, for work that may overlap this
    /// one's. It starts after the work already queued here ([`join`](Self::join) merges it back).
    pub fn fork_on(&self, ordinal: usize) -> Result<ExecutionContext, DriverError> {
        let device = if ordinal == self.ordinal() { Arc::clone(&self.device) } else { device_context(ordinal)? };
        let other = device.execution_context();
        if !Arc::ptr_eq(&other.stream, &self.stream) {
            other.wait_for(self)?;
        }
        Ok(other)
    }

    /// Makes work queued here from now on wait for the work queued on `other` so far (without
    /// blocking the host). An operation that forks must join every fork before its closure
    /// returns: the operation counts as complete when the work queued on its own stream is.
    pub fn join(&self, other: &ExecutionContext) -> Result<(), DriverError> {
        if Arc::ptr_eq(&self.stream, &other.stream) {
            return Ok(());
        }
        self.wait_for(other)
    }

    fn wait_for(&self, other: &ExecutionContext) -> Result<(), DriverError> {
        let event = CudaEvent::new_without_timing(other.device.context())?;
        event.record(&other.stream)?;
        self.stream.wait_event(&event)
    }

    /// Runs `op` here: on this stream when it belongs to this device (or to none), else on a
    /// forked stream of its device that is joined back.
    fn run<'a, T>(&self, op: DeviceOperation<'a, T>) -> Result<T, DriverError> {
        let Some(device) = op.device.filter(|d| *d != self.ordinal()) else {
            return (op.run)(self);
        };
        let other = self.fork_on(device)?;
        let out = (op.run)(&other);
        self.join(&other)?;
        out
    }
}

impl std::fmt::Debug for ExecutionContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutionContext").field("device", &self.ordinal()).field("stream", &self.stream).finish()
    }
}

type Run<'a, T> = Box<dyn FnOnce(&ExecutionContext) -> Result<T, DriverError> + Send + 'a>;

/// Lazy GPU work on one device that yields a `T` once it has completed.
///
/// Building one enqueues nothing. [`sync`](Self::sync) runs it on a stream that the device's
/// scheduling policy picks (round-robin by default) and blocks until it has finished; `.await`
/// (through [`IntoFuture`]) does the same without blocking the async task. `'a` is how long the
/// buffers it borrows stay borrowed: until it has completed (or been dropped unstarted).
#[must_use = "a DeviceOperation does nothing until it is run with .sync() or .await"]
pub struct DeviceOperation<'a, T> {
    /// `None` for work tied to no device ([`value`], [`with_context`]): it runs wherever the
    /// operation it is part of runs, and on the [`default_device`] when run on its own.
    pub(crate) device: Option<usize>,
    pub(crate) run: Run<'a, T>,
}

impl<'a, T: Send + 'a> DeviceOperation<'a, T> {
    /// An operation on device `device`: `enqueue` queues its work on the given stream (and must
    /// not wait for it) and returns the output, which the caller gets after the work completed.
    ///
    /// `enqueue` runs with the device's context current on the calling thread, so it may call
    /// the driver directly (`cuda_core::memory`, `cuda_core::sys`) as well as through
    /// `cuda_core`'s types, whichever thread the operation runs on.
    ///
    /// ```no_run
    /// use cuda_async::device_operation::DeviceOperation;
    /// let cleared = DeviceOperation::new(0, |exec| {
    ///     let buf = cuda_core::DeviceBuffer::<u32>::zeroed(exec.stream(), 256)?;
    ///     // SAFETY: the buffer holds 1024 bytes and lives until the operation has completed
    ///     // (it is the operation's output); the device's context is current here.
    ///     unsafe { cuda_core::memory::memset_d32_async(buf.cu_deviceptr(), 7, 256, exec.stream().cu_stream())? };
    ///     Ok(buf)
    /// });
    /// let sevens = cleared.sync()?.to_host_vec(&cuda_core::CudaContext::new(0)?.default_stream())?;
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn new(
        device: usize,
        enqueue: impl FnOnce(&ExecutionContext) -> Result<T, DriverError> + Send + 'a,
    ) -> DeviceOperation<'a, T> {
        let run = move |exec: &ExecutionContext| {
            exec.bind()?;
            enqueue(exec)
        };
        DeviceOperation { device: Some(device), run: Box::new(run) }
    }

    /// An operation tied to no device: it runs where the operation it is composed into runs.
    pub(crate) fn anywhere(enqueue: impl FnOnce(&ExecutionContext) -> Result<T, DriverError> + Send + 'a) -> Self {
        DeviceOperation { device: None, run: Box::new(enqueue) }
    }

    /// An operation that does no GPU work and yields `value`.
    pub fn value(device: usize, value: T) -> DeviceOperation<'a, T> {
        DeviceOperation::new(device, move |_| Ok(value))
    }

    /// The device the operation runs on ([`default_device`] for one tied to none).
    pub fn device(&self) -> usize {
        self.device.unwrap_or_else(default_device)
    }

    /// Transforms the output on the host when the operation is enqueued.
    pub fn map<U: Send + 'a>(self, f: impl FnOnce(T) -> U + Send + 'a) -> DeviceOperation<'a, U> {
        let device = self.device;
        DeviceOperation { device, run: Box::new(move |exec| (self.run)(exec).map(f)) }
    }

    /// Chains `next` after this operation: `next` gets this one's output and returns the
    /// operation (or `Result` of one, as the generated `_async` methods do) to run after it, on
    /// the same stream, so it sees this one's results. Nothing runs until the chain does.
    pub fn and_then<U: Send + 'a, N: IntoDeviceOperation<'a, U>>(
        self,
        next: impl FnOnce(T) -> N + Send + 'a,
    ) -> DeviceOperation<'a, U> {
        let device = self.device;
        let run = move |exec: &ExecutionContext| {
            let out = (self.run)(exec)?;
            let op = next(out).into_device_operation()?;
            exec.run(op)
        };
        DeviceOperation { device, run: Box::new(run) }
    }

    /// Runs the operation with the device's scheduling policy and blocks until it has finished;
    /// errors of the work (a trapped kernel, say) surface here.
    pub fn sync(self) -> Result<T, DriverError> {
        let exec = device_context(self.device())?.execution_context();
        self.sync_in(&exec)
    }

    /// Runs the operation on `stream` (of the operation's device) and blocks until it has finished.
    pub fn sync_on(self, stream: &Arc<CudaStream>) -> Result<T, DriverError> {
        let ordinal = stream.context().ordinal();
        if let Some(device) = self.device.filter(|d| *d != ordinal) {
            return Err(DriverError::Async {
                message: format!(
                    "sync_on: the operation runs on device {device}, the stream belongs to device {ordinal}"
                ),
            });
        }
        let device = device_context(ordinal)?;
        self.sync_in(&ExecutionContext::new(device, Arc::clone(stream)))
    }

    fn sync_in(self, exec: &ExecutionContext) -> Result<T, DriverError> {
        let guard = WaitOnDrop(Some(Arc::clone(&exec.stream)));
        let out = (self.run)(exec);
        let done = guard.wait();
        let out = out?;
        done?;
        Ok(out)
    }
}

/// Waits for a stream when dropped (so an unwinding panic cannot end a borrow the GPU still uses).
struct WaitOnDrop(Option<Arc<CudaStream>>);

impl WaitOnDrop {
    /// Waits for the work queued so far (through an event, so work queued later by others on
    /// the same stream is not waited for).
    fn wait(mut self) -> Result<(), DriverError> {
        let stream = self.0.take().expect("waited once");
        wait_for_stream(&stream)
    }
}

impl Drop for WaitOnDrop {
    fn drop(&mut self) {
        if let Some(stream) = self.0.take() {
            let _ = stream.synchronize();
        }
    }
}

fn wait_for_stream(stream: &Arc<CudaStream>) -> Result<(), DriverError> {
    match CudaEvent::new_without_timing(stream.context()) {
        Ok(event) => {
            event.record(stream)?;
            event.synchronize()
        }
        Err(_) => stream.synchronize(),
    }
}

/// What [`DeviceOperation::and_then`]'s closure may return: an operation, or a `Result` of one.
pub trait IntoDeviceOperation<'a, T> {
    /// The operation, or the error that building it gave.
    fn into_device_operation(self) -> Result<DeviceOperation<'a, T>, DriverError>;
}

impl<'a, T> IntoDeviceOperation<'a, T> for DeviceOperation<'a, T> {
    fn into_device_operation(self) -> Result<DeviceOperation<'a, T>, DriverError> {
        Ok(self)
    }
}

impl<'a, T> IntoDeviceOperation<'a, T> for Result<DeviceOperation<'a, T>, DriverError> {
    fn into_device_operation(self) -> Result<DeviceOperation<'a, T>, DriverError> {
        self
    }
}

/// Runs `a` and `b` concurrently: `a` on the stream the operation runs on, `b` on another one
/// the policy picks (of `b`'s device), joined back before the pair completes. Both start after
/// the work queued before the pair; neither waits for the other. See [`zip!`](crate::zip).
pub fn zip<'a, A: Send + 'a, B: Send + 'a>(
    a: DeviceOperation<'a, A>,
    b: DeviceOperation<'a, B>,
) -> DeviceOperation<'a, (A, B)> {
    let device = a.device.or(b.device);
    let run = move |exec: &ExecutionContext| {
        // Fork before `a` is queued, so `b` does not wait for `a`.
        let other = exec.fork_on(b.device.unwrap_or(exec.ordinal()))?;
        let out_a = (a.run)(exec);
        let out_b = (b.run)(&other);
        exec.join(&other)?;
        Ok((out_a?, out_b?))
    };
    DeviceOperation { device, run: Box::new(run) }
}

/// Runs every operation of `ops` concurrently, each on a stream of its own (as [`zip!`](crate::zip)
/// does for a number fixed in the source), and yields their outputs in order. With more
/// operations than the device has pool streams, some share a stream and run one after another.
///
/// ```no_run
/// use cuda_async::device_operation::{DeviceOperation, zip_all};
/// let chunks: Vec<DeviceOperation<'_, cuda_core::DeviceBuffer<u8>>> = (0..3)
///     .map(|_| DeviceOperation::new(0, |exec| cuda_core::DeviceBuffer::zeroed(exec.stream(), 1 << 20)))
///     .collect();
/// let buffers = zip_all(chunks).sync()?;
/// assert_eq!(buffers.len(), 3);
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn zip_all<'a, T: Send + 'a>(ops: impl IntoIterator<Item = DeviceOperation<'a, T>>) -> DeviceOperation<'a, Vec<T>> {
    let mut ops = ops.into_iter();
    let Some(first) = ops.next() else { return value(Vec::new()) };
    // zip(zip(zip(first, b), c), d): each step forks its new operation before the ones so far
    // are queued, so none waits for another; `first` runs on the stream the whole runs on.
    ops.fold(first.map(|out| vec![out]), |so_far, op| {
        zip(so_far, op).map(|(mut outs, out)| {
            outs.push(out);
            outs
        })
    })
}

/// An operation that does no GPU work and yields `x`, tied to no device (it runs where the
/// operation it is composed into runs). [`DeviceOperation::value`] ties one to a device.
///
/// ```no_run
/// use cuda_async::device_operation::{DeviceOperation, value};
/// let seven = value(7u32).and_then(|n| value(n * 6)).sync()?;
/// assert_eq!(seven, 42);
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn value<'a, T: Send + 'a>(x: T) -> DeviceOperation<'a, T> {
    DeviceOperation::anywhere(move |_| Ok(x))
}

/// An operation built when it runs, from where it runs: `f` gets the [`ExecutionContext`]
/// (stream and device; its context is current) and returns the operation (or `Result` of one)
/// to run there.
///
/// ```no_run
/// use cuda_async::device_operation::{DeviceOperation, with_context};
/// let zeros = with_context(|exec| {
///     let device = exec.ordinal();
///     DeviceOperation::new(device, |exec| cuda_core::DeviceBuffer::<f32>::zeroed(exec.stream(), 256))
/// });
/// let buf = zeros.sync()?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn with_context<'a, T: Send + 'a, N: IntoDeviceOperation<'a, T>>(
    f: impl FnOnce(&ExecutionContext) -> N + Send + 'a,
) -> DeviceOperation<'a, T> {
    DeviceOperation::anywhere(move |exec| {
        exec.bind()?;
        let op = f(exec).into_device_operation()?;
        exec.run(op)
    })
}

/// `.zip()` on a tuple of operations: the same as [`zip!`](crate::zip) with the tuple's elements.
///
/// ```no_run
/// use cuda_async::device_operation::{Zippable, value};
/// let (a, b, c) = (value(1u8), value('x'), value(2.5f32)).zip().sync()?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub trait Zippable<'a, O> {
    /// One operation running the tuple's operations concurrently, yielding their outputs.
    fn zip(self) -> DeviceOperation<'a, O>;
}

macro_rules! zippable {
    ($($op:ident: $t:ident),+) => {
        impl<'a, $($t: Send + 'a),+> Zippable<'a, ($($t,)+)> for ($(DeviceOperation<'a, $t>,)+) {
            fn zip(self) -> DeviceOperation<'a, ($($t,)+)> {
                let ($($op,)+) = self;
                crate::zip!($($op),+)
            }
        }
    };
}
zippable!(a: A, b: B);
zippable!(a: A, b: B, c: C);
zippable!(a: A, b: B, c: C, d: D);
zippable!(a: A, b: B, c: C, d: D, e: E);
zippable!(a: A, b: B, c: C, d: D, e: E, f: F);
zippable!(a: A, b: B, c: C, d: D, e: E, f: F, g: G);
zippable!(a: A, b: B, c: C, d: D, e: E, f: F, g: G, h: H);
zippable!(a: A, b: B, c: C, d: D, e: E, f: F, g: G, h: H, i: I);
zippable!(a: A, b: B, c: C, d: D, e: E, f: F, g: G, h: H, i: I, j: J);
zippable!(a: A, b: B, c: C, d: D, e: E, f: F, g: G, h: H, i: I, j: J, k: K);
zippable!(a: A, b: B, c: C, d: D, e: E, f: F, g: G, h: H, i: I, j: J, k: K, l: L);

impl<'a, T: Send + 'a> IntoFuture for DeviceOperation<'a, T> {
    type Output = Result<T, DriverError>;
    type IntoFuture = DeviceFuture<'a, T>;

    fn into_future(self) -> DeviceFuture<'a, T> {
        DeviceFuture { state: State::Pending(self) }
    }
}

/// The future of a [`DeviceOperation`]: on first poll it enqueues the work, then a helper thread
/// waits for it and wakes the task. Dropping it while the work runs blocks until it has finished.
#[must_use = "futures do nothing unless awaited"]
pub struct DeviceFuture<'a, T> {
    state: State<'a, T>,
}

enum State<'a, T> {
    Pending(DeviceOperation<'a, T>),
    Running { output: Result<T, DriverError>, completion: Arc<Completion> },
    Done,
}

/// The result of enqueued work (once known) and the task waiting for it.
type CompletionState = (Option<Result<(), DriverError>>, Option<Waker>);

/// Completion of enqueued work, filled in by the waiting thread.
#[derive(Default)]
struct Completion {
    state: Mutex<CompletionState>,
    done: Condvar,
}

impl Completion {
    fn finish(&self, result: Result<(), DriverError>) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.0 = Some(result);
        if let Some(waker) = state.1.take() {
            waker.wake();
        }
        self.done.notify_all();
    }

    fn wait(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while state.0.is_none() {
            state = self.done.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }
}

// The future never pins its fields in place (the output is moved out whole).
impl<T> Unpin for DeviceFuture<'_, T> {}

impl<'a, T: Send + 'a> Future for DeviceFuture<'a, T> {
    type Output = Result<T, DriverError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let State::Pending(_) = this.state {
            let State::Pending(op) = std::mem::replace(&mut this.state, State::Done) else { unreachable!() };
            let exec = match device_context(op.device()) {
                Ok(device) => device.execution_context(),
                Err(e) => return Poll::Ready(Err(e)),
            };
            let guard = WaitOnDrop(Some(Arc::clone(&exec.stream)));
            let output = (op.run)(&exec);
            let completion = Arc::new(Completion::default());
            match start_waiter(&exec.stream, Arc::clone(&completion)) {
                Ok(()) => std::mem::forget(guard),
                // No event or thread: wait here (blocking) instead.
                Err(_) => completion.finish(guard.wait()),
            }
            this.state = State::Running { output, completion };
        }
        let State::Running { completion, .. } = &this.state else {
            return Poll::Ready(Err(DriverError::Async { message: "DeviceFuture polled after completion".into() }));
        };
        {
            let mut state = completion.state.lock().unwrap_or_else(|p| p.into_inner());
            if state.0.is_none() {
                state.1 = Some(cx.waker().clone());
                return Poll::Pending;
            }
        }
        let State::Running { output, completion } = std::mem::replace(&mut this.state, State::Done) else {
            unreachable!()
        };
        let done = completion.state.lock().unwrap_or_else(|p| p.into_inner()).0.take().unwrap_or(Ok(()));
        Poll::Ready(output.and_then(|out| done.map(|()| out)))
    }
}

/// Records an event after the work queued on `stream` and waits for it on a helper thread.
fn start_waiter(stream: &Arc<CudaStream>, completion: Arc<Completion>) -> Result<(), DriverError> {
    let event = CudaEvent::new_without_timing(stream.context())?;
    event.record(stream)?;
    std::thread::Builder::new()
        .name("cuda-async-wait".into())
        .spawn(move || completion.finish(event.synchronize()))
        .map(|_| ())
        .map_err(|e| DriverError::Async { message: format!("cannot start a waiting thread: {e}") })
}

impl<T> Drop for DeviceFuture<'_, T> {
    fn drop(&mut self) {
        // The GPU may still use buffers this future borrows or owns: wait for it first.
        if let State::Running { completion, .. } = &self.state {
            completion.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>(_: &T) {}
    fn assert_static<T: 'static>(_: &T) {}

    #[test]
    fn operations_and_futures_are_send() {
        let op = DeviceOperation::value(0, vec![1u8]).map(|v| v.len()).and_then(|n| DeviceOperation::value(0, n + 1));
        assert_send(&op);
        assert_static(&op);
        let fut = op.into_future();
        assert_send(&fut);
        let borrowed = String::from("x");
        let op = DeviceOperation::new(0, |_| Ok(borrowed.len()));
        assert_send(&op.into_future());
        let z = zip(DeviceOperation::value(0, 1u8), DeviceOperation::value(0, 'c'));
        assert_eq!(z.device(), 0);
    }

    #[test]
    fn zip_of_any_arity_flattens_in_order() {
        // The annotations check the flattening: a step that shadowed an earlier element's name
        // would repeat that element's type.
        let six: DeviceOperation<'_, (u8, u16, u32, u64, char, bool)> =
            crate::zip!(value(1u8), value(2u16), value(3u32), value(4u64), value('5'), value(true),);
        assert_eq!(six.device(), default_device(), "tied to no device");
        let one: DeviceOperation<'_, u8> = crate::zip!(value(1u8));
        assert_eq!(one.device(), default_device());
        let pair = (value(1u8), DeviceOperation::value(3, 'c')).zip();
        assert_eq!(pair.device(), 3, "a zip runs on the device of the first operation tied to one");
        let three: DeviceOperation<'_, (u8, char, i64)> = (value(1u8), value('c'), value(-1i64)).zip();
        assert_send(&three);
        let built = with_context(|exec| DeviceOperation::value(exec.ordinal(), exec.ordinal()));
        assert_send(&built);
    }

    #[test]
    fn zip_all_takes_the_device_of_the_first_operation_tied_to_one() {
        let all: DeviceOperation<'_, Vec<u8>> = zip_all([value(1u8), DeviceOperation::value(2, 2), value(3)]);
        assert_eq!(all.device(), 2);
        assert_eq!(zip_all(Vec::<DeviceOperation<'_, u8>>::new()).device(), default_device(), "empty: tied to none");
    }

    #[test]
    fn without_a_driver_sync_and_await_report_it() {
        if cuda_core::is_driver_present() {
            return; // a GPU machine: covered by the GPU tests
        }
        let e = DeviceOperation::value(0, 1).sync().unwrap_err();
        assert!(e.to_string().contains("no NVIDIA driver"), "{e}");
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let e = rt.block_on(async { DeviceOperation::value(0, 1).await }).unwrap_err();
        assert!(e.to_string().contains("no NVIDIA driver"), "{e}");
        let pair = crate::zip!(DeviceOperation::value(0, 1), DeviceOperation::value(0, 2));
        let e = rt.block_on(async { tokio::spawn(pair.into_future()).await });
        assert!(e.unwrap().is_err());
    }
}
