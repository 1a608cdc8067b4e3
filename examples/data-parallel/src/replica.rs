//! One GPU's copy of the model: its shard of the batch, the parameters, the activations and the
//! gradients in device memory, and the kernels that run one step on them.

use cuda_async::device_operation::DeviceOperation;
use cuda_core::{DeviceBuffer, DriverError, LaunchConfig};

use crate::device::kernels::{self, Module};
use crate::model::{BATCH, INPUTS, OUTPUTS, Params, Problem, UNITS};

pub struct Replica {
    pub device: usize,
    module: Module,
    /// The shard's inputs and targets.
    x: DeviceBuffer<f32>,
    t: DeviceBuffer<f32>,
    /// The activations and their gradients (the shard's rows).
    h: DeviceBuffer<f32>,
    y: DeviceBuffer<f32>,
    dy: DeviceBuffer<f32>,
    dh: DeviceBuffer<f32>,
    pub params: Params<DeviceBuffer<f32>>,
    pub grads: Params<DeviceBuffer<f32>>,
}

/// A copy of `data` on device `d`, uploaded on a stream of its pool and waited for.
fn upload(d: usize, data: &[f32]) -> Result<DeviceBuffer<f32>, DriverError> {
    DeviceOperation::new(d, |exec| DeviceBuffer::from_host(exec.stream(), data)).sync()
}

/// `len` zeros on device `d`.
fn zeros(d: usize, len: usize) -> Result<DeviceBuffer<f32>, DriverError> {
    DeviceOperation::new(d, |exec| DeviceBuffer::zeroed(exec.stream(), len)).sync()
}

fn cfg(len: usize) -> LaunchConfig {
    LaunchConfig::for_num_elems(len as u32)
}

impl Replica {
    /// Device `device`'s replica, training on `rows` of the batch.
    pub fn new(device: usize, p: &Problem, rows: std::ops::Range<usize>) -> Result<Replica, DriverError> {
        let n = rows.len();
        Ok(Replica {
            device,
            module: kernels::load_async(device)?,
            x: upload(device, &p.x[rows.start * INPUTS..rows.end * INPUTS])?,
            t: upload(device, &p.t[rows.start * OUTPUTS..rows.end * OUTPUTS])?,
            h: zeros(device, n * UNITS)?,
            y: zeros(device, n * OUTPUTS)?,
            dy: zeros(device, n * OUTPUTS)?,
            dh: zeros(device, n * UNITS)?,
            params: p.params.try_map(|w| upload(device, w))?,
            grads: p.params.try_map(|w| zeros(device, w.len()))?,
        })
    }

    /// Forward and backward over the shard, queued on `stream`: the gradients of the loss over
    /// the whole batch that this shard contributes (their sum over the GPUs is the gradient).
    fn forward_backward(&mut self, stream: &cuda_core::CudaStream) -> Result<(), DriverError> {
        let (m, w, g) = (&self.module, &self.params, &mut self.grads);
        m.hidden(stream, cfg(self.h.len()), &self.x, &w.w1, &w.b1, INPUTS as u32, &mut self.h)?;
        m.output(stream, cfg(self.y.len()), &self.h, &w.w2, &w.b2, UNITS as u32, &mut self.y)?;
        m.output_grad(stream, cfg(self.dy.len()), &self.y, &self.t, 1.0 / BATCH as f32, &mut self.dy)?;
        m.hidden_grad(stream, cfg(self.dh.len()), &self.dy, &w.w2, &self.h, OUTPUTS as u32, &mut self.dh)?;
        m.weight_grad(stream, cfg(g.w2.len()), &self.h, &self.dy, UNITS as u32, &mut g.w2)?;
        m.bias_grad(stream, cfg(g.b2.len()), &self.dy, &mut g.b2)?;
        m.weight_grad(stream, cfg(g.w1.len()), &self.x, &self.dh, INPUTS as u32, &mut g.w1)?;
        m.bias_grad(stream, cfg(g.b1.len()), &self.dh, &mut g.b1)
    }

    /// [`forward_backward`](Self::forward_backward) as an operation on this replica's device:
    /// the async runtime runs it on a stream of that device's pool.
    pub fn forward_backward_op(&mut self) -> DeviceOperation<'_, ()> {
        DeviceOperation::new(self.device, move |exec| self.forward_backward(exec.stream()))
    }

    /// `w -= lr · grad` for every parameter, queued on `stream`.
    pub fn sgd(&mut self, stream: &cuda_core::CudaStream, lr: f32) -> Result<(), DriverError> {
        let (m, w, g) = (&self.module, &mut self.params, &self.grads);
        m.sgd(stream, cfg(w.w1.len()), lr, &g.w1, &mut w.w1)?;
        m.sgd(stream, cfg(w.b1.len()), lr, &g.b1, &mut w.b1)?;
        m.sgd(stream, cfg(w.w2.len()), lr, &g.w2, &mut w.w2)?;
        m.sgd(stream, cfg(w.b2.len()), lr, &g.b2, &mut w.b2)
    }

    /// The four gradient buffers, for the all-reduce.
    pub fn grads_mut(&mut self) -> [&mut DeviceBuffer<f32>; 4] {
        let g = &mut self.grads;
        [&mut g.w1, &mut g.b1, &mut g.w2, &mut g.b2]
    }
}
