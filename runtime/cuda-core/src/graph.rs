//! CUDA graphs: the work a closure queues on a stream (kernel launches, device-to-device copies,
//! memsets, event waits between streams) captured once into a [`Graph`], instantiated into a
//! [`GraphExec`] and replayed with one launch; a kernel's arguments updated in the instance.
//!
//! ```no_run
//! # use cuda_core::{CudaContext, DeviceBuffer};
//! let ctx = CudaContext::new(0)?;
//! let stream = ctx.new_stream()?; // the legacy default stream cannot be captured
//! let mut a = DeviceBuffer::<f32>::zeroed(&stream, 1024)?;
//! let b = DeviceBuffer::<f32>::zeroed(&stream, 1024)?;
//! let graph = stream.capture(|s| {
//!     a.set_zero(s)?; // a memset node
//!     a.copy_from(s, &b) // a copy node; kernel launches (`module.k(s, ..)`) become kernel nodes
//! })?;
//! let exec = graph.instantiate()?;
//! for _ in 0..100 {
//!     exec.launch(&stream)?; // the whole sequence, one launch
//! }
//! stream.synchronize()?;
//! # Ok::<(), cuda_core::DriverError>(())
//! ```
//!
//! Soundness: a replay reads and writes the captured buffers long after the calls that named
//! them returned, so a graph keeps the memory of every `DeviceBuffer` its work uses: a buffer
//! dropped while a graph (or an instance) still uses it is freed when the last of them is
//! dropped. What a graph cannot keep alive is refused while capturing: copies from or to host
//! memory, and cudarc's slices (adopt them with `DeviceBuffer::from_cudarc`, or vouch for them
//! with [`CudaStream::capture_unchecked`]). Instances wait for their last replay before letting
//! go of memory.

mod capture;

use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::sys;

use crate::context::{CudaContext, CudaStream};
use crate::driver::check;
use crate::error::DriverError;
use crate::event::CudaEvent;
use crate::launch_args::LaunchStream;
use crate::memory::Allocation;

pub use capture::CaptureMode;
pub(crate) use capture::{after, before, refuse};

/// What a captured operation is (the nodes a [`Graph`] recorded, in the order they were queued).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A kernel launch; `name` is the kernel's readable name (`Function::name`).
    Kernel {
        /// The kernel's readable name.
        name: String,
    },
    /// A device-to-device copy (`DeviceBuffer::copy_from`).
    Memcpy,
    /// A memset (`DeviceBuffer::set_zero`, `zeroed`).
    Memset,
}

/// One operation of a capture: its node, and the memory it uses.
struct NodeRecord {
    raw: sys::CUgraphNode,
    kind: NodeKind,
    keep: Vec<Arc<Allocation>>,
}

/// A captured graph, shared by the instances made from it (they refer to its nodes).
struct GraphInner {
    ctx: Arc<CudaContext>,
    /// The `CUgraph`; graph objects are not internally synchronised, so every call that uses it
    /// or its nodes holds this lock.
    raw: Mutex<sys::CUgraph>,
    nodes: Vec<NodeRecord>,
}

// SAFETY: the handles are used only under `raw`'s lock (or read-only, as plain values).
unsafe impl Send for GraphInner {}
unsafe impl Sync for GraphInner {}

impl GraphInner {
    fn lock(&self) -> MutexGuard<'_, sys::CUgraph> {
        self.raw.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for GraphInner {
    fn drop(&mut self) {
        let raw = *self.raw.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !raw.is_null() && self.ctx.bind_to_thread().is_ok() {
            // SAFETY: we own the graph; instances made from it are gone (they hold this Arc).
            let _ = unsafe { sys::cuGraphDestroy(raw) };
        }
    }
}

/// Work captured from a stream by [`CudaStream::capture`]: instantiate it to run it.
///
/// It keeps the memory of the buffers its work uses (see the module docs).
pub struct Graph {
    inner: Arc<GraphInner>,
}

impl Graph {
    /// The operations captured through this crate, in the order they were queued.
    ///
    /// ```no_run
    /// # let ctx = cuda_core::CudaContext::new(0)?; let stream = ctx.new_stream()?;
    /// # let mut a = cuda_core::DeviceBuffer::<u8>::zeroed(&stream, 8)?;
    /// let graph = stream.capture(|s| a.set_zero(s))?;
    /// assert_eq!(graph.nodes().collect::<Vec<_>>(), [&cuda_core::graph::NodeKind::Memset]);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn nodes(&self) -> impl Iterator<Item = &NodeKind> {
        self.inner.nodes.iter().map(|n| &n.kind)
    }

    /// Number of operations captured through this crate.
    pub fn len(&self) -> usize {
        self.inner.nodes.len()
    }

    /// `true` when nothing was captured.
    pub fn is_empty(&self) -> bool {
        self.inner.nodes.is_empty()
    }

    /// The raw `CUgraph`, for reading it with the driver (`cuGraphDebugDotPrint`, say). Do not
    /// destroy or change it.
    pub fn raw(&self) -> sys::CUgraph {
        *self.inner.lock()
    }

    /// An executable instance of the graph, launched with [`GraphExec::launch`]. One graph may
    /// have several instances.
    ///
    /// Errors: the driver's, e.g. for a graph whose work mixes devices.
    pub fn instantiate(&self) -> Result<GraphExec, DriverError> {
        let ctx = &self.inner.ctx;
        ctx.bind_to_thread()?;
        let mut raw = std::ptr::null_mut();
        {
            let graph = self.inner.lock();
            // SAFETY: the graph is live and locked; the instance is destroyed in Drop.
            check(unsafe { sys::cuGraphInstantiateWithFlags(&mut raw, *graph, 0) }, "cuGraphInstantiateWithFlags")
                .map_err(|e| e.context("instantiating a CUDA graph"))?;
        }
        Ok(GraphExec {
            raw,
            graph: Arc::clone(&self.inner),
            keep: self.keep(),
            state: Mutex::new(ReplayState { last: None, retired: Vec::new() }),
        })
    }

    /// Every allocation the graph's work uses, once each.
    fn keep(&self) -> Vec<Arc<Allocation>> {
        let mut keep: Vec<Arc<Allocation>> = Vec::new();
        for a in self.inner.nodes.iter().flat_map(|n| &n.keep) {
            if !keep.iter().any(|k| Arc::ptr_eq(k, a)) {
                keep.push(Arc::clone(a));
            }
        }
        keep
    }
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph").field("nodes", &self.inner.nodes.iter().map(|n| &n.kind).collect::<Vec<_>>()).finish()
    }
}

/// An instantiated [`Graph`]: [`launch`](Self::launch) replays all of its work with one call.
///
/// It keeps the memory its work uses until it is dropped (after its last replay has finished).
pub struct GraphExec {
    raw: sys::CUgraphExec,
    graph: Arc<GraphInner>,
    /// The allocations the instance's nodes use now.
    keep: Vec<Arc<Allocation>>,
    state: Mutex<ReplayState>,
}

/// What the replays queued so far still hold.
struct ReplayState {
    /// Recorded after the latest launch (launches of one instance run in order, so it completes
    /// after all of them).
    last: Option<CudaEvent>,
    /// Allocations the instance no longer uses, kept until the launches that did have finished.
    retired: Vec<(CudaEvent, Vec<Arc<Allocation>>)>,
}

// SAFETY: the instance handle is used under `state`'s lock or through `&mut self`; the graph's
// handles under its own lock.
unsafe impl Send for GraphExec {}
unsafe impl Sync for GraphExec {}

impl GraphExec {
    /// Queues one replay of the whole graph on `stream` (ours or cudarc's, of the graph's
    /// context). `Ok` means queued, as for a kernel launch.
    pub fn launch(&self, stream: &(impl LaunchStream + ?Sized)) -> Result<(), DriverError> {
        let raw_stream = self.stream_of(stream)?;
        let mut state = self.lock_state();
        // SAFETY: the instance is live; its memory is kept (`keep`) until the replay is done.
        check(unsafe { sys::cuGraphLaunch(self.raw, raw_stream) }, "cuGraphLaunch")
            .map_err(|e| e.context("launching a CUDA graph"))?;
        let last = match state.last.take() {
            Some(event) => event,
            None => CudaEvent::new_without_timing(&self.graph.ctx)?,
        };
        // SAFETY: both handles are live; re-recording moves the marker to this launch.
        let recorded = check(unsafe { sys::cuEventRecord(last.raw(), raw_stream) }, "cuEventRecord");
        state.last = Some(last);
        recorded?;
        state.release_finished();
        Ok(())
    }

    /// Uploads the instance's work to the device ahead of its first launch on `stream`, so that
    /// launch does not pay for it.
    pub fn upload(&self, stream: &(impl LaunchStream + ?Sized)) -> Result<(), DriverError> {
        let raw_stream = self.stream_of(stream)?;
        // SAFETY: both handles are live.
        check(unsafe { sys::cuGraphUpload(self.raw, raw_stream) }, "cuGraphUpload")
    }

    /// Replaces the arguments of every operation by those of `graph`, a capture of the same
    /// operations in the same order with other arguments (other buffers, scalars, launch
    /// shapes). Cheaper than instantiating `graph`; launches queued before keep their arguments.
    ///
    /// Errors: the graphs differ in their operations or order (the message names the first
    /// difference): instantiate `graph` instead.
    pub fn update(&mut self, graph: &Graph) -> Result<(), DriverError> {
        self.graph.ctx.bind_to_thread()?;
        // SAFETY: an all-zero result is valid plain data.
        let mut info: sys::CUgraphExecUpdateResultInfo = unsafe { std::mem::zeroed() };
        let r = {
            let new = graph.inner.lock();
            // SAFETY: both are live; the new graph is locked while the driver reads it.
            unsafe { sys::cuGraphExecUpdate_v2(self.raw, *new, &mut info) }
        };
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err(DriverError::Graph { message: update_failure(info.result, &graph.inner, info.errorNode) });
        }
        let old = std::mem::replace(&mut self.keep, graph.keep());
        self.retire(old)
    }

    /// Replaces the arguments of one kernel node, the `node`-th operation of the capture
    /// ([`Graph::nodes`]), by those of the one kernel launch that `launch` queues on `stream` (a
    /// stream of ours, not the legacy default one, not being captured). The launch is captured,
    /// not run. Launches queued before keep their arguments.
    ///
    /// The buffers of the node's earlier arguments stay alive until the next [`update`] or until
    /// the instance is dropped.
    ///
    /// Errors: `node` is not a kernel launch of the same kernel, or `launch` queued anything but
    /// one kernel launch.
    ///
    /// [`update`]: Self::update
    pub fn update_kernel(
        &mut self,
        node: usize,
        stream: &CudaStream,
        launch: impl FnOnce(&CudaStream) -> Result<(), DriverError>,
    ) -> Result<(), DriverError> {
        let Some(target) = self.graph.nodes.get(node) else {
            return Err(DriverError::Graph {
                message: format!(
                    "update_kernel: node {node} does not exist; the graph has {} nodes",
                    self.graph.nodes.len()
                ),
            });
        };
        let NodeKind::Kernel { name } = &target.kind else {
            return Err(DriverError::Graph {
                message: format!("update_kernel: node {node} is a {:?}, not a kernel launch", target.kind),
            });
        };
        let one = stream.capture(launch)?;
        let launched = match one.inner.nodes.as_slice() {
            [only] => only,
            nodes => {
                return Err(DriverError::Graph {
                    message: format!(
                        "update_kernel: the closure must queue exactly one kernel launch; it queued {} operations",
                        nodes.len()
                    ),
                });
            }
        };
        match &launched.kind {
            NodeKind::Kernel { name: new } if new == name => {}
            other => {
                return Err(DriverError::Graph {
                    message: format!(
                        "update_kernel: node {node} launches kernel `{name}`; the closure queued {other:?}"
                    ),
                });
            }
        }
        self.graph.ctx.bind_to_thread()?;
        {
            let _one = one.inner.lock();
            // SAFETY: an all-zero parameter block is valid plain data; the driver fills it.
            let mut params: sys::CUDA_KERNEL_NODE_PARAMS = unsafe { std::mem::zeroed() };
            // SAFETY: the node is live (its graph is locked); `params` points into that graph,
            // which outlives the set below.
            check(
                unsafe { sys::cuGraphKernelNodeGetParams_v2(launched.raw, &mut params) },
                "cuGraphKernelNodeGetParams",
            )?;
            let _graph = self.graph.lock();
            // SAFETY: the node belongs to the graph this instance was made from (locked); the
            // driver copies the parameters.
            check(
                unsafe { sys::cuGraphExecKernelNodeSetParams_v2(self.raw, target.raw, &params) },
                "cuGraphExecKernelNodeSetParams",
            )
            .map_err(|e| e.context(format!("updating kernel node {node} (`{name}`)")))?;
        }
        for a in &launched.keep {
            if !self.keep.iter().any(|k| Arc::ptr_eq(k, a)) {
                self.keep.push(Arc::clone(a));
            }
        }
        Ok(())
    }

    /// The raw `CUgraphExec`. Do not destroy it.
    pub fn raw(&self) -> sys::CUgraphExec {
        self.raw
    }

    /// `stream`'s handle, after checking it belongs to the graph's context.
    fn stream_of(&self, stream: &(impl LaunchStream + ?Sized)) -> Result<sys::CUstream, DriverError> {
        let stream = stream.cudarc_stream();
        let ctx = &self.graph.ctx;
        if stream.context().cu_ctx() != ctx.cu_ctx() {
            return Err(DriverError::Graph {
                message: format!(
                    "the graph belongs to device {}, the stream to another context (device {}); launch it on a \
                     stream of the context it was captured on",
                    ctx.ordinal(),
                    stream.context().ordinal()
                ),
            });
        }
        ctx.bind_to_thread()?;
        Ok(stream.cu_stream())
    }

    fn lock_state(&self) -> MutexGuard<'_, ReplayState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Keeps `old` until the launches queued so far have finished.
    fn retire(&mut self, old: Vec<Arc<Allocation>>) -> Result<(), DriverError> {
        let state = self.state.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        state.release_finished();
        let Some(last) = state.last.take() else { return Ok(()) };
        match last.query() {
            // Nothing in flight: `old` can go now.
            Ok(true) => Ok(()),
            // The latest launch's event now guards `old`; the next launch records a new one.
            Ok(false) => {
                state.retired.push((last, old));
                Ok(())
            }
            Err(e) => {
                state.retired.push((last, old));
                Err(e)
            }
        }
    }
}

impl ReplayState {
    /// Drops the retired allocations whose launches have finished.
    fn release_finished(&mut self) {
        self.retired.retain(|(event, _)| !matches!(event.query(), Ok(true)));
    }
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        // The memory may be freed below: wait for the replays that use it first.
        if let Some(last) = &state.last {
            let _ = last.synchronize();
        }
        for (event, _) in &state.retired {
            let _ = event.synchronize();
        }
        if self.graph.ctx.bind_to_thread().is_ok() {
            // SAFETY: we own the instance; a replay still in flight would be finished anyway
            // (the driver frees an in-flight instance when it completes).
            let _ = unsafe { sys::cuGraphExecDestroy(self.raw) };
        }
    }
}

impl std::fmt::Debug for GraphExec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphExec").field("nodes", &self.graph.nodes.len()).finish()
    }
}

/// Why `cuGraphExecUpdate` refused, in words, naming the node where the driver says.
fn update_failure(result: sys::CUgraphExecUpdateResult, graph: &GraphInner, node: sys::CUgraphNode) -> String {
    use sys::CUgraphExecUpdateResult as R;
    let at = graph
        .nodes
        .iter()
        .position(|n| n.raw == node)
        .map(|i| format!(" (at node {i}, {:?})", graph.nodes[i].kind))
        .unwrap_or_default();
    let why = match result {
        R::CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED => "the new graph has other operations or dependencies",
        R::CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED => "an operation is of another kind",
        R::CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED | R::CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE => {
            "a launch runs another kernel"
        }
        R::CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED => {
            "an operation changed in a way an instance cannot take (e.g. a copy between other kinds of memory)"
        }
        R::CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED => "a launch changed its attributes (e.g. cluster shape)",
        R::CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED => "the graph holds operations an instance cannot update",
        _ => "the driver refused the update",
    };
    format!("update: {why}{at}; capture the same operations in the same order, or instantiate the new graph")
}
