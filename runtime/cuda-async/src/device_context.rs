//! Per-device state of the async runtime: the context, a pool of streams, and the scheduling policy.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use cuda_core::{CudaContext, CudaStream, DriverError};

use crate::device_operation::ExecutionContext;
use crate::scheduling_policy::{RoundRobin, SchedulingPolicy};

/// Streams per device made by [`init_device_contexts`] (and on first use of a device).
pub const DEFAULT_STREAMS_PER_DEVICE: usize = 4;

/// One GPU as the async runtime sees it: its context, a pool of non-blocking streams, and the
/// policy that picks a stream of the pool for each operation when it runs.
pub struct DeviceContext {
    ctx: Arc<CudaContext>,
    streams: Vec<Arc<CudaStream>>,
    policy: RwLock<Arc<dyn SchedulingPolicy>>,
}

impl DeviceContext {
    fn new(ordinal: usize, streams: usize) -> Result<DeviceContext, DriverError> {
        let ctx = CudaContext::new(ordinal)?;
        let streams = (0..streams.max(1)).map(|_| ctx.new_stream()).collect::<Result<Vec<_>, _>>()?;
        Ok(DeviceContext { ctx, streams, policy: RwLock::new(Arc::new(RoundRobin::new())) })
    }

    /// The device's context (the same primary context `CudaContext::new(ordinal)` opens).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    /// The stream pool operations are scheduled on.
    pub fn streams(&self) -> &[Arc<CudaStream>] {
        &self.streams
    }

    /// Replaces the scheduling policy (default: [`RoundRobin`]). Operations already running keep
    /// their stream.
    pub fn set_scheduling_policy(&self, policy: impl SchedulingPolicy + 'static) {
        *self.policy.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(policy);
    }

    /// The current scheduling policy.
    pub fn scheduling_policy(&self) -> Arc<dyn SchedulingPolicy> {
        Arc::clone(&self.policy.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// The stream the policy picks for the next operation.
    pub fn choose_stream(&self) -> Arc<CudaStream> {
        let index = self.scheduling_policy().select(self.streams.len());
        Arc::clone(&self.streams[index % self.streams.len()])
    }

    /// Where the next operation on this device runs: a stream chosen by the policy.
    pub fn execution_context(self: &Arc<Self>) -> ExecutionContext {
        ExecutionContext::new(Arc::clone(self), self.choose_stream())
    }
}

impl std::fmt::Debug for DeviceContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceContext")
            .field("device", &self.ctx.ordinal())
            .field("streams", &self.streams.len())
            .field("policy", &self.scheduling_policy())
            .finish()
    }
}

fn registry() -> &'static RwLock<BTreeMap<usize, Arc<DeviceContext>>> {
    static DEVICES: OnceLock<RwLock<BTreeMap<usize, Arc<DeviceContext>>>> = OnceLock::new();
    DEVICES.get_or_init(Default::default)
}

/// Opens devices `first_device .. first_device + count` for async work, each with
/// [`DEFAULT_STREAMS_PER_DEVICE`] streams and round-robin scheduling. Devices already open are
/// kept as they are, so calling it again is harmless. The first call makes `first_device` the
/// [`default_device`].
///
/// Each device gets its own context, stream pool and scheduling policy: an operation runs on
/// a stream of its own device's pool (`kernels::load_async(d)`'s launches on device `d`), and
/// [`zip!`](crate::zip) of operations on different devices runs them at the same time.
///
/// Errors: [`DriverError::Placement`] when the range goes past the devices the driver reports
/// (nothing is opened then; [`device_count`] says how many there are), `count == 0`, and the
/// driver's errors.
///
/// ```no_run
/// use cuda_async::device_context::{device_count, init_device_contexts};
/// // Every visible GPU:
/// init_device_contexts(0, device_count()?)?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn init_device_contexts(first_device: usize, count: usize) -> Result<(), DriverError> {
    init_device_contexts_with(first_device, count, DEFAULT_STREAMS_PER_DEVICE)
}

/// `usize::MAX` until the first [`init_device_contexts`] (or [`set_default_device`]).
static DEFAULT_DEVICE: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The device that operations not tied to one ([`value`](crate::device_operation::value),
/// [`with_context`](crate::device_operation::with_context)) run on when run on their own: the
/// `first_device` of the first [`init_device_contexts`], else 0.
///
/// ```
/// cuda_async::device_context::set_default_device(1);
/// assert_eq!(cuda_async::device_context::default_device(), 1);
/// ```
pub fn default_device() -> usize {
    match DEFAULT_DEVICE.load(Ordering::Relaxed) {
        usize::MAX => 0,
        device => device,
    }
}

/// Makes `device` the [`default_device`].
///
/// ```
/// cuda_async::device_context::set_default_device(0);
/// ```
pub fn set_default_device(device: usize) {
    DEFAULT_DEVICE.store(device, Ordering::Relaxed);
}

/// Calls `f` with the CUDA context of device `device` (opening the device for async work first
/// if needed), for synchronous work next to the async runtime: allocating, copying, loading.
///
/// ```no_run
/// use cuda_async::device_context::{init_device_contexts, with_cuda_context};
/// init_device_contexts(0, 1)?;
/// let name = with_cuda_context(0, |ctx| ctx.name().to_string())?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn with_cuda_context<R>(device: usize, f: impl FnOnce(&Arc<CudaContext>) -> R) -> Result<R, DriverError> {
    let dev = device_context(device)?;
    dev.context().bind_to_thread()?;
    Ok(f(dev.context()))
}

/// [`init_device_contexts`] with `streams_per_device` streams in each pool (at least 1).
pub fn init_device_contexts_with(
    first_device: usize,
    count: usize,
    streams_per_device: usize,
) -> Result<(), DriverError> {
    if count == 0 {
        return Err(DriverError::Async {
            message: "init_device_contexts: count is 0; open at least one device".into(),
        });
    }
    check_range(&format!("init_device_contexts({first_device}, {count})"), first_device, count, device_count()?)?;
    let _ = DEFAULT_DEVICE.compare_exchange(usize::MAX, first_device, Ordering::Relaxed, Ordering::Relaxed);
    for ordinal in first_device..first_device + count {
        let mut devices = registry().write().unwrap_or_else(|p| p.into_inner());
        if let std::collections::btree_map::Entry::Vacant(slot) = devices.entry(ordinal) {
            slot.insert(Arc::new(DeviceContext::new(ordinal, streams_per_device)?));
        }
    }
    Ok(())
}

/// Number of CUDA devices the driver reports (those `CUDA_VISIBLE_DEVICES` leaves visible):
/// the `count` that [`init_device_contexts`]`(0, count)` opens them all with.
///
/// ```no_run
/// let gpus = cuda_async::device_context::device_count()?;
/// println!("{gpus} GPU(s)");
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn device_count() -> Result<usize, DriverError> {
    cuda_core::CudaContext::device_count()
}

/// The ordinals of the devices open for async work, in order.
///
/// ```no_run
/// cuda_async::device_context::init_device_contexts(0, 1)?;
/// assert_eq!(cuda_async::device_context::open_devices(), [0]);
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn open_devices() -> Vec<usize> {
    registry().read().unwrap_or_else(|p| p.into_inner()).keys().copied().collect()
}

/// The error for a range of devices past the `available` ones the driver reports; `call` is what
/// asked for them.
fn check_range(call: &str, first: usize, count: usize, available: usize) -> Result<(), DriverError> {
    let end = first.checked_add(count);
    if end.is_some_and(|end| end <= available) {
        return Ok(());
    }
    let asked = match end {
        Some(_) if count == 1 => format!("device {first}"),
        Some(end) => format!("devices {first}..={}", end - 1),
        None => format!("{count} devices from {first}"),
    };
    let have = match available {
        0 => "no CUDA device".to_string(),
        1 => "1 CUDA device (ordinal 0)".to_string(),
        n => format!("{n} CUDA devices (ordinals 0..={})", n - 1),
    };
    let fix = if available == 0 {
        "run on a machine with an NVIDIA GPU (`nvidia-smi` lists them)".to_string()
    } else if count == 1 {
        format!("use a device below {available}")
    } else if first >= available {
        format!("start at a device below {available}")
    } else {
        format!("ask for at most {} from device {first}", available - first)
    };
    Err(DriverError::Placement {
        message: format!(
            "{call} asks for {asked}, but the driver reports {have}; {fix} \
             (device_count() says how many there are; CUDA_VISIBLE_DEVICES may hide some)"
        ),
    })
}

/// The async context of device `ordinal`, opened with the defaults on first use when
/// [`init_device_contexts`] did not open it.
pub fn device_context(ordinal: usize) -> Result<Arc<DeviceContext>, DriverError> {
    if let Some(dev) = registry().read().unwrap_or_else(|p| p.into_inner()).get(&ordinal) {
        return Ok(Arc::clone(dev));
    }
    check_range(&format!("device {ordinal} (cuda_async::device_context)"), ordinal, 1, device_count()?)?;
    init_device_contexts(ordinal, 1)?;
    let devices = registry().read().unwrap_or_else(|p| p.into_inner());
    devices
        .get(&ordinal)
        .cloned()
        .ok_or_else(|| DriverError::Async { message: format!("device {ordinal} is not open") })
}

/// Sets the scheduling policy of device `ordinal` (opening it if needed).
pub fn set_scheduling_policy(ordinal: usize, policy: impl SchedulingPolicy + 'static) -> Result<(), DriverError> {
    device_context(ordinal)?.set_scheduling_policy(policy);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_devices_is_an_error() {
        let e = init_device_contexts(0, 0).unwrap_err();
        assert!(e.to_string().contains("count is 0"), "{e}");
    }

    #[test]
    fn a_range_past_the_devices_says_what_there_is() {
        let e = check_range("init_device_contexts(0, 4)", 0, 4, 1).unwrap_err().to_string();
        assert_eq!(
            e,
            "init_device_contexts(0, 4) asks for devices 0..=3, but the driver reports 1 CUDA device (ordinal 0); \
             ask for at most 1 from device 0 (device_count() says how many there are; CUDA_VISIBLE_DEVICES may \
             hide some)"
        );
        let e = check_range("device 2 (cuda_async::device_context)", 2, 1, 2).unwrap_err().to_string();
        assert!(e.starts_with("device 2 (cuda_async::device_context) asks for device 2"), "{e}");
        assert!(e.contains("2 CUDA devices (ordinals 0..=1)") && e.contains("use a device below 2"), "{e}");
        let e = check_range("x", 3, 2, 2).unwrap_err().to_string();
        assert!(e.contains("asks for devices 3..=4") && e.contains("start at a device below 2"), "{e}");
        let e = check_range("x", usize::MAX, 2, 8).unwrap_err().to_string();
        assert!(e.contains("2 devices from"), "{e}");
        let e = check_range("x", 0, 1, 0).unwrap_err();
        assert!(matches!(e, DriverError::Placement { .. }) && e.to_string().contains("no CUDA device;"), "{e}");
        assert!(check_range("x", 0, 0, 0).is_ok() && check_range("x", 0, 8, 8).is_ok());
        assert!(check_range("x", 3, 5, 8).is_ok());
    }

    #[test]
    fn without_a_driver_init_says_so() {
        if cuda_core::is_driver_present() {
            return; // a GPU machine: covered by the GPU tests
        }
        let e = init_device_contexts(0, 1).unwrap_err();
        assert!(e.to_string().contains("no NVIDIA driver found"), "{e}");
        assert!(device_context(0).is_err());
    }
}
