//! The MLP's kernels, one thread per output element: the two layers forward, the loss gradient,
//! the backward pass through them, and the SGD update. Matrices are row-major, a row per sample.

use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
pub mod kernels {
    use super::*;

    /// `h[r, j] = relu(b1[j] + Σ_k x[r, k] · w1[k, j])`: `inputs` columns of `x`, `b1.len()` units.
    #[kernel]
    pub fn hidden(x: &[f32], w1: &[f32], b1: &[f32], inputs: u32, mut h: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let (units, inputs) = (b1.len(), inputs as usize);
        if let Some(out) = h.get_mut(idx) {
            let (r, j) = (i / units, i % units);
            let mut acc = b1[j];
            for k in 0..inputs {
                acc += x[r * inputs + k] * w1[k * units + j];
            }
            *out = if acc > 0.0 { acc } else { 0.0 };
        }
    }

    /// `y[r, o] = b2[o] + Σ_j h[r, j] · w2[j, o]`: `units` columns of `h`, `b2.len()` outputs.
    #[kernel]
    pub fn output(h: &[f32], w2: &[f32], b2: &[f32], units: u32, mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let (outputs, units) = (b2.len(), units as usize);
        if let Some(out) = y.get_mut(idx) {
            let (r, o) = (i / outputs, i % outputs);
            let mut acc = b2[o];
            for j in 0..units {
                acc += h[r * units + j] * w2[j * outputs + o];
            }
            *out = acc;
        }
    }

    /// The gradient of the loss `Σ (y − t)² / (2 · batch)` by `y`: `(y − t) · scale`, with
    /// `scale = 1 / batch` over the whole batch (all GPUs), so that summing the GPUs' gradients
    /// gives the mean.
    #[kernel]
    pub fn output_grad(y: &[f32], t: &[f32], scale: f32, mut dy: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(out) = dy.get_mut(idx) {
            *out = (y[i] - t[i]) * scale;
        }
    }

    /// Back through the second layer and the ReLU: `dh[r, j] = [h[r, j] > 0] · Σ_o dy[r, o] · w2[j, o]`.
    #[kernel]
    pub fn hidden_grad(dy: &[f32], w2: &[f32], h: &[f32], outputs: u32, mut dh: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let outputs = outputs as usize;
        let units = w2.len() / outputs;
        if let Some(out) = dh.get_mut(idx) {
            let (r, j) = (i / units, i % units);
            let mut acc = 0.0f32;
            for o in 0..outputs {
                acc += dy[r * outputs + o] * w2[j * outputs + o];
            }
            *out = if h[i] > 0.0 { acc } else { 0.0 };
        }
    }

    /// A weight gradient `dw[i, j] = Σ_r a[r, i] · g[r, j]` (`aᵀ g`): `cols` columns of `a`, `dw`
    /// holds `cols × (g.len() / rows)`.
    #[kernel]
    pub fn weight_grad(a: &[f32], g: &[f32], cols: u32, mut dw: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let n = idx.get();
        let cols = cols as usize;
        let rows = a.len() / cols;
        let k = g.len().checked_div(rows).unwrap_or(0);
        if let Some(out) = dw.get_mut(idx) {
            let (i, j) = (n / k, n % k);
            let mut acc = 0.0f32;
            for r in 0..rows {
                acc += a[r * cols + i] * g[r * k + j];
            }
            *out = acc;
        }
    }

    /// A bias gradient `db[j] = Σ_r g[r, j]`, `db.len()` columns.
    #[kernel]
    pub fn bias_grad(g: &[f32], mut db: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let j = idx.get();
        let k = db.len();
        if let Some(out) = db.get_mut(idx) {
            let mut acc = 0.0f32;
            for r in 0..g.len() / k {
                acc += g[r * k + j];
            }
            *out = acc;
        }
    }

    /// `w -= lr · grad`.
    #[kernel]
    pub fn sgd(lr: f32, grad: &[f32], mut w: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(w) = w.get_mut(idx) {
            *w -= lr * grad[i];
        }
    }
}
