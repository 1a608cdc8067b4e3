//! `DeviceOperation::timed`: the GPU time an operation took, measured with events on its stream.

use cuda_core::{CudaEvent, DriverError};

use crate::device_operation::{DeviceOperation, ExecutionContext};

/// The GPU time of a [`timed`](DeviceOperation::timed) operation: events recorded on its stream
/// before and after its work (after the work of every stream it forked, such as `zip!`'s).
#[derive(Debug)]
pub struct GpuTime {
    start: CudaEvent,
    end: CudaEvent,
}

impl GpuTime {
    /// Milliseconds from the start of the operation's work to the end of it, as the GPU measured
    /// them (resolution about half a microsecond). The operation has completed when its output
    /// is handed out, so this does not wait.
    pub fn ms(&self) -> Result<f32, DriverError> {
        self.start.elapsed_ms(&self.end)
    }
}

impl<'a, T: Send + 'a> DeviceOperation<'a, T> {
    /// The same operation, also yielding the GPU time its work took ([`GpuTime`]): an event with
    /// timing is recorded on its stream before it and another after it. Work that other
    /// operations queue on the same stream meanwhile is timed too, so time an operation on its
    /// own, or every operation that runs at once in one `zip!`.
    ///
    /// ```no_run
    /// use cuda_async::device_operation::DeviceOperation;
    /// let clear = DeviceOperation::new(0, |exec| cuda_core::DeviceBuffer::<f32>::zeroed(exec.stream(), 1 << 24));
    /// let (_buf, time) = clear.timed().sync()?;
    /// println!("clearing 64 MiB took {:.3} ms", time.ms()?);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn timed(self) -> DeviceOperation<'a, (T, GpuTime)> {
        let device = self.device;
        let run = move |exec: &ExecutionContext| {
            exec.bind()?;
            let start = exec.stream().record_timed_event()?;
            let out = (self.run)(exec)?;
            let end = exec.stream().record_timed_event()?;
            Ok((out, GpuTime { start, end }))
        };
        DeviceOperation { device, run: Box::new(run) }
    }
}
