//! Stream capture: `CudaStream::capture` and the record of what each captured operation uses,
//! which the launch and copy paths of this crate add to (`before` / `after` / `refuse`).
//!
//! Captures in progress are found by the driver's capture id (`cuStreamGetCaptureInfo`), so work
//! on another stream that joined the capture (through an event) is recorded too. Outside a
//! capture the hooks cost one relaxed atomic load.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::sys;

use super::{Graph, GraphInner, NodeKind, NodeRecord};
use crate::context::CudaStream;
use crate::driver::check;
use crate::error::DriverError;
use crate::memory::Allocation;

/// How a capture treats other threads' CUDA calls that could disturb it (the driver's
/// `CUstreamCaptureMode`). [`ThreadLocal`](Self::ThreadLocal) is the default of
/// [`CudaStream::capture`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CaptureMode {
    /// Unsafe calls (synchronous ones, allocation) are errors on any thread while the capture runs.
    Global,
    /// Unsafe calls are errors on the capturing thread only.
    #[default]
    ThreadLocal,
    /// No call is refused for being unsafe (the capture may still fail on one).
    Relaxed,
}

impl CaptureMode {
    fn raw(self) -> sys::CUstreamCaptureMode {
        match self {
            CaptureMode::Global => sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL,
            CaptureMode::ThreadLocal => sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            CaptureMode::Relaxed => sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED,
        }
    }
}

/// Captures begun through this crate and not yet ended (fast path: none).
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
/// Their records, by capture id.
static CAPTURES: Mutex<Vec<Capture>> = Mutex::new(Vec::new());

struct Capture {
    id: u64,
    /// Whether work the graph cannot keep alive is refused (`capture`) or vouched for
    /// (`capture_unchecked`).
    checked: bool,
    nodes: Vec<NodeRecord>,
}

// SAFETY: node handles are plain values, used only by the thread that ends the capture.
unsafe impl Send for Capture {}

fn captures() -> MutexGuard<'static, Vec<Capture>> {
    CAPTURES.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The capture an operation about to be queued on a stream joins (see [`before`]).
pub(crate) struct Capturing {
    id: u64,
}

/// The capture status and id of `stream`.
fn capture_info(stream: sys::CUstream) -> Result<(sys::CUstreamCaptureStatus, u64), DriverError> {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    let mut id = 0;
    use std::ptr::null_mut as null;
    // SAFETY: the stream is live and its context current (the callers bound it); the outputs
    // left null are optional.
    let r = unsafe { sys::cuStreamGetCaptureInfo_v3(stream, &mut status, &mut id, null(), null(), null(), null()) };
    check(r, "cuStreamGetCaptureInfo")?;
    Ok((status, id))
}

/// Called before queuing an operation on `stream`: `Some` when a capture of ours records it.
/// `foreign` says that the operation uses memory a graph cannot keep alive (cudarc's slices, raw
/// pointers), refused by a checked capture; `what` names the operation for the error.
pub(crate) fn before(
    stream: sys::CUstream,
    foreign: bool,
    what: &dyn Fn() -> String,
) -> Result<Option<Capturing>, DriverError> {
    if ACTIVE.load(Ordering::Relaxed) == 0 {
        return Ok(None);
    }
    let (status, id) = capture_info(stream)?;
    if status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE {
        return Ok(None);
    }
    let captures = captures();
    let Some(capture) = captures.iter().find(|c| c.id == id) else {
        return Err(not_ours(&what()));
    };
    if foreign && capture.checked {
        return Err(DriverError::Graph {
            message: format!(
                "{} uses memory that a graph cannot keep alive (a cudarc CudaSlice/CudaView, or memory of \
                 another library); adopt cudarc's slices with DeviceBuffer::from_cudarc before capturing, \
                 or capture with the unsafe CudaStream::capture_unchecked and keep that memory alive yourself",
                what()
            ),
        });
    }
    Ok(Some(Capturing { id }))
}

/// Called after an operation was queued on `stream` in `capture`: records its node (the stream's
/// one dependency now) and the memory it uses.
pub(crate) fn after(stream: sys::CUstream, capture: Capturing, kind: NodeKind, keep: &[&Arc<Allocation>]) {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    let (mut id, mut graph, mut deps, mut edges, mut count) =
        (0, std::ptr::null_mut(), std::ptr::null(), std::ptr::null(), 0usize);
    // SAFETY: the stream is live; the driver returns pointers into its own state, read at once.
    let r = unsafe {
        sys::cuStreamGetCaptureInfo_v3(stream, &mut status, &mut id, &mut graph, &mut deps, &mut edges, &mut count)
    };
    // After a captured operation the stream depends on exactly its node.
    let node = if r == sys::CUresult::CUDA_SUCCESS && count == 1 && !deps.is_null() {
        // SAFETY: `deps` holds `count` nodes.
        unsafe { *deps }
    } else {
        std::ptr::null_mut()
    };
    let keep = keep.iter().map(|a| Arc::clone(a)).collect();
    if let Some(c) = captures().iter_mut().find(|c| c.id == capture.id) {
        c.nodes.push(NodeRecord { raw: node, kind, keep });
    }
}

/// Refuses `what` (a copy to or from host memory) on a stream being captured: a replay would
/// read or write that host memory long after the call, when it may be gone.
pub(crate) fn refuse(stream: sys::CUstream, what: &str) -> Result<(), DriverError> {
    if ACTIVE.load(Ordering::Relaxed) == 0 {
        return Ok(());
    }
    match capture_info(stream)? {
        (sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE, _) => Ok(()),
        _ => Err(DriverError::Graph {
            message: format!(
                "{what} cannot be captured into a graph: every replay would read or write that host memory, \
                 which the graph cannot keep alive; copy before capturing or between replays, and capture \
                 only device work (kernels, device-to-device copies, set_zero)"
            ),
        }),
    }
}

fn not_ours(what: &str) -> DriverError {
    DriverError::Graph {
        message: format!(
            "{what} was queued on a stream that another API is capturing (cudarc's begin_capture, the driver's \
             cuStreamBeginCapture); capture with CudaStream::capture, which keeps the buffers the graph uses \
             alive"
        ),
    }
}

impl CudaStream {
    /// Captures the work `work` queues on this stream (kernel launches of ours, device copies,
    /// `set_zero`, waits on events of other streams that then join the capture) into a
    /// [`Graph`], without running it. The stream must not be the legacy default stream.
    ///
    /// ```no_run
    /// # let ctx = cuda_core::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let mut acc = cuda_core::DeviceBuffer::<f32>::zeroed(&stream, 256)?;
    /// let graph = stream.capture(|s| acc.set_zero(s))?;
    /// graph.instantiate()?.launch(&stream)?;
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    ///
    /// Errors: `work`'s error (the capture is dropped); work a graph cannot hold (copies from or
    /// to host memory, cudarc slices: see [`crate::graph`]); calls the driver refuses during a
    /// capture (allocation, synchronisation: do them before), with the driver's code.
    pub fn capture(&self, work: impl FnOnce(&CudaStream) -> Result<(), DriverError>) -> Result<Graph, DriverError> {
        self.capture_as(CaptureMode::default(), true, work)
    }

    /// [`capture`](Self::capture) in another [`CaptureMode`].
    pub fn capture_with(
        &self,
        mode: CaptureMode,
        work: impl FnOnce(&CudaStream) -> Result<(), DriverError>,
    ) -> Result<Graph, DriverError> {
        self.capture_as(mode, true, work)
    }

    /// [`capture_with`](Self::capture_with) that also takes launches on memory the graph cannot
    /// keep alive: cudarc's slices and views, and memory of other libraries.
    ///
    /// # Safety
    /// Such memory must stay allocated for as long as the graph or an instance made from it may
    /// still run (until they are dropped, or their replays are synchronised and no more are
    /// queued).
    pub unsafe fn capture_unchecked(
        &self,
        mode: CaptureMode,
        work: impl FnOnce(&CudaStream) -> Result<(), DriverError>,
    ) -> Result<Graph, DriverError> {
        self.capture_as(mode, false, work)
    }

    fn capture_as(
        &self,
        mode: CaptureMode,
        checked: bool,
        work: impl FnOnce(&CudaStream) -> Result<(), DriverError>,
    ) -> Result<Graph, DriverError> {
        if self.is_default() {
            return Err(DriverError::Graph {
                message: "the legacy default stream cannot be captured; capture a stream of ctx.new_stream()".into(),
            });
        }
        let ctx = self.context();
        ctx.bind_to_thread()?;
        if capture_info(self.raw())?.0 != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
            return Err(DriverError::Graph {
                message: "the stream is being captured already; captures do not nest".into(),
            });
        }
        // SAFETY: the stream is live and its context current; the guard ends the capture.
        check(unsafe { sys::cuStreamBeginCapture_v2(self.raw(), mode.raw()) }, "cuStreamBeginCapture")?;
        let mut guard = Ending { stream: self, id: None, ended: false };
        let (_, id) = capture_info(self.raw())?;
        captures().push(Capture { id, checked, nodes: Vec::new() });
        guard.id = Some(id);
        ACTIVE.fetch_add(1, Ordering::Relaxed);
        let result = work(self);
        let (graph, nodes) = guard.end();
        let graph = match (result, graph) {
            (Ok(()), Ok(graph)) => graph,
            (Err(e), graph) => {
                if let Ok(graph) = graph {
                    destroy(graph);
                }
                return Err(explain(e));
            }
            (Ok(()), Err(e)) => return Err(explain(e)),
        };
        Ok(Graph { inner: Arc::new(GraphInner { ctx: Arc::clone(ctx), raw: Mutex::new(graph), nodes }) })
    }
}

/// Ends a capture, also when the closure panics (the stream would stay unusable otherwise).
struct Ending<'s> {
    stream: &'s CudaStream,
    /// The capture's record, once made.
    id: Option<u64>,
    ended: bool,
}

impl Ending<'_> {
    /// Ends the capture: the graph (or why there is none) and the nodes recorded.
    fn end(mut self) -> (Result<sys::CUgraph, DriverError>, Vec<NodeRecord>) {
        self.ended = true;
        let graph = end_capture(self.stream);
        let nodes = self.forget();
        (graph, nodes)
    }

    /// Removes the capture's record.
    fn forget(&mut self) -> Vec<NodeRecord> {
        let Some(id) = self.id.take() else { return Vec::new() };
        ACTIVE.fetch_sub(1, Ordering::Relaxed);
        let mut captures = captures();
        match captures.iter().position(|c| c.id == id) {
            Some(i) => captures.swap_remove(i).nodes,
            None => Vec::new(),
        }
    }
}

impl Drop for Ending<'_> {
    fn drop(&mut self) {
        if !self.ended
            && let Ok(graph) = end_capture(self.stream)
        {
            destroy(graph);
        }
        self.forget();
    }
}

fn end_capture(stream: &CudaStream) -> Result<sys::CUgraph, DriverError> {
    stream.context().bind_to_thread()?;
    let mut graph = std::ptr::null_mut();
    // SAFETY: the stream is live and being captured by us.
    check(unsafe { sys::cuStreamEndCapture(stream.raw(), &mut graph) }, "cuStreamEndCapture")?;
    if graph.is_null() {
        return Err(DriverError::Graph { message: "the capture produced no graph".into() });
    }
    Ok(graph)
}

fn destroy(graph: sys::CUgraph) {
    // SAFETY: a graph of ours that nothing else refers to.
    let _ = unsafe { sys::cuGraphDestroy(graph) };
}

/// Adds what the capture-specific driver errors mean.
fn explain(e: DriverError) -> DriverError {
    let fix = match e.name() {
        "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED" => {
            "a call that is not allowed while capturing (an allocation, a synchronisation, a copy to host memory): \
             do it before the capture"
        }
        "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED" => {
            "an earlier call during the capture was not allowed (an allocation, a synchronisation, a copy to host \
             memory), which ended it: do such calls before the capture"
        }
        "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT" => {
            "the legacy default stream was used while capturing; use streams of ctx.new_stream() only"
        }
        "CUDA_ERROR_STREAM_CAPTURE_UNJOINED" => {
            "another stream forked from the capture (through an event) was not joined back; make the captured \
             stream wait on an event recorded at the end of that stream's work"
        }
        "CUDA_ERROR_STREAM_CAPTURE_ISOLATION" => {
            "the capture waited on an event recorded outside it (e.g. cudarc's stream synchronisation of a slice); \
             only events recorded during the capture can be waited on"
        }
        _ => return e,
    };
    e.context(format!("capturing a CUDA graph ({fix})"))
}
