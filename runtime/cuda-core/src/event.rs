//! `CudaEvent`: a marker in a stream, to wait for the work before it, order streams, or time work.

use std::sync::Arc;

use cudarc::driver::sys::{self, CUresult};

use crate::context::{CudaContext, CudaStream};
use crate::driver::check;
use crate::error::DriverError;

/// A marker in a stream, for timing work or waiting for part of it.
///
/// Made with timing ([`CudaEvent::new`], [`CudaStream::record_timed_event`]) or without
/// ([`CudaEvent::new_without_timing`], `record_event(None)`); only events with timing can be
/// passed to [`elapsed_ms`](Self::elapsed_ms).
pub struct CudaEvent {
    ctx: Arc<CudaContext>,
    raw: sys::CUevent,
    /// Whether the event records time (made without `CU_EVENT_DISABLE_TIMING`).
    timed: bool,
}

// SAFETY: as for streams: the handle may be used from any thread once its context is bound.
unsafe impl Send for CudaEvent {}
unsafe impl Sync for CudaEvent {}

impl CudaEvent {
    /// A new event (with timing).
    pub fn new(ctx: &Arc<CudaContext>) -> Result<CudaEvent, DriverError> {
        CudaEvent::with_flags(ctx, sys::CUevent_flags::CU_EVENT_DEFAULT)
    }

    /// A new event without timing (cheaper; for ordering and completion only).
    pub fn new_without_timing(ctx: &Arc<CudaContext>) -> Result<CudaEvent, DriverError> {
        CudaEvent::with_flags(ctx, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
    }

    /// A new event with the driver's `flags` (`CU_EVENT_DEFAULT` times, `CU_EVENT_DISABLE_TIMING`
    /// does not, `CU_EVENT_BLOCKING_SYNC` makes waiting sleep instead of spin).
    ///
    /// ```no_run
    /// use cuda_core::{CudaContext, CudaEvent, sys::CUevent_flags};
    /// let ctx = CudaContext::new(0)?;
    /// let done = CudaEvent::with_flags(&ctx, CUevent_flags::CU_EVENT_BLOCKING_SYNC)?;
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn with_flags(ctx: &Arc<CudaContext>, flags: sys::CUevent_flags) -> Result<CudaEvent, DriverError> {
        ctx.bind_to_thread()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the context is current; destroyed in Drop.
        check(unsafe { sys::cuEventCreate(&mut raw, flags as u32) }, "cuEventCreate")?;
        Ok(CudaEvent { ctx: Arc::clone(ctx), raw, timed: records_time(flags) })
    }

    /// Whether the event records time, so that [`elapsed_ms`](Self::elapsed_ms) can use it.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// assert!(!ctx.default_stream().record_event(None)?.is_timed());
    /// assert!(ctx.default_stream().record_timed_event()?.is_timed());
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn is_timed(&self) -> bool {
        self.timed
    }

    /// Records the event at the current end of `stream`.
    pub fn record(&self, stream: &CudaStream) -> Result<(), DriverError> {
        self.ctx.bind_to_thread()?;
        // SAFETY: both handles are live.
        check(unsafe { sys::cuEventRecord(self.raw, stream.raw()) }, "cuEventRecord")
    }

    /// Blocks until the work before the recorded point has finished.
    pub fn synchronize(&self) -> Result<(), DriverError> {
        self.ctx.bind_to_thread()?;
        // SAFETY: the event is live.
        check(unsafe { sys::cuEventSynchronize(self.raw) }, "cuEventSynchronize")
    }

    /// Whether the work before the recorded point has finished (`true` also for an event never
    /// recorded), without waiting; errors of that work are reported here.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let event = ctx.default_stream().record_event(None)?;
    /// while !event.query()? {
    ///     std::thread::yield_now(); // do host work meanwhile
    /// }
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn query(&self) -> Result<bool, DriverError> {
        self.ctx.bind_to_thread()?;
        // SAFETY: the event is live.
        match unsafe { sys::cuEventQuery(self.raw) } {
            CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            other => check(other, "cuEventQuery").map(|()| true),
        }
    }

    /// Milliseconds of GPU time from this event to `end` (both recorded, both with timing; waits
    /// for `end`).
    ///
    /// Errors: `CUDA_ERROR_INVALID_HANDLE` saying which event has no timing when either was made
    /// without it (`record_event(None)`, [`CudaEvent::new_without_timing`]).
    pub fn elapsed_ms(&self, end: &CudaEvent) -> Result<f32, DriverError> {
        for (which, event) in [("start", self), ("end", end)] {
            if !event.timed {
                return Err(untimed(which));
            }
        }
        end.synchronize()?;
        // An old driver gives an error instead of cudarc's panic on a missing entry point.
        if !crate::driver::has_symbol("cuEventElapsedTime_v2") {
            return Err(DriverError::from_cuda(CUresult::CUDA_ERROR_NOT_SUPPORTED, "cuEventElapsedTime_v2")
                .context("timing events (needs a driver for CUDA 12.8 or newer)"));
        }
        let mut ms = 0f32;
        // SAFETY: both events are live and recorded.
        check(unsafe { sys::cuEventElapsedTime_v2(&mut ms, self.raw, end.raw) }, "cuEventElapsedTime")?;
        Ok(ms)
    }

    /// The raw `CUevent`, for calling the driver directly.
    pub fn raw(&self) -> sys::CUevent {
        self.raw
    }

    /// The context the event belongs to.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
}

/// Whether an event made with `flags` records time: all but `CU_EVENT_DISABLE_TIMING` and
/// `CU_EVENT_INTERPROCESS` (which the driver accepts only together with it).
fn records_time(flags: sys::CUevent_flags) -> bool {
    !matches!(flags, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING | sys::CUevent_flags::CU_EVENT_INTERPROCESS)
}

/// The error of [`CudaEvent::elapsed_ms`] with an event (`which`: start or end) without timing:
/// the driver's code for it, and what to write instead.
fn untimed(which: &str) -> DriverError {
    DriverError::from_cuda(CUresult::CUDA_ERROR_INVALID_HANDLE, "cuEventElapsedTime").context(format!(
        "timing with events: the {which} event was made without timing (`record_event(None)`, \
         `new_event(None)` or `CudaEvent::new_without_timing`); make both with \
         `stream.record_timed_event()` (or `record_event(Some(CU_EVENT_DEFAULT))`)"
    ))
}

impl Drop for CudaEvent {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: we created this event; an event may be destroyed before it completes.
            let _ = unsafe { sys::cuEventDestroy_v2(self.raw) };
        }
    }
}

impl std::fmt::Debug for CudaEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaEvent").field("device", &self.ctx.ordinal()).field("timed", &self.timed).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_events_with_timing_time() {
        use sys::CUevent_flags as F;
        assert!(records_time(F::CU_EVENT_DEFAULT));
        assert!(records_time(F::CU_EVENT_BLOCKING_SYNC));
        assert!(!records_time(F::CU_EVENT_DISABLE_TIMING));
        assert!(!records_time(F::CU_EVENT_INTERPROCESS));
    }

    #[test]
    fn timing_an_untimed_event_names_the_fix() {
        let e = untimed("start");
        assert_eq!(e.name(), "CUDA_ERROR_INVALID_HANDLE", "the code the driver gives for it");
        let text = e.to_string();
        assert!(text.contains("the start event was made without timing"), "{text}");
        assert!(text.contains("record_timed_event()") && text.contains("record_event(None)"), "{text}");
    }
}
