//! Programs written against the earlier thread-index API: each old form is one error that says
//! what changed and what to write, with no follow-on errors (CHANGELOG.md lists the changes).
#![allow(unexpected_cfgs)]

use cuda_device::{DisjointSlice, cuda_module, device, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    /// `index_2d()` used to return the (x, y) position.
    #[kernel]
    pub fn transpose(width: usize, input: &[f32], mut out: DisjointSlice<f32>) {
        let col = thread::index_2d().x();
        let p = thread::index_2d();
        let row = p.y();
        if col < width && let Some(o) = out.get_mut(thread::index_1d()) {
            *o = input[row * width + col];
        }
    }

    /// `to_linear` used to be safe.
    #[kernel]
    pub fn scale(width: usize, k: f32, mut out: DisjointSlice<f32>) {
        if let Some(idx) = thread::index_2d_xy().to_linear(width) {
            if let Some(o) = out.get_mut(idx) {
                *o *= k;
            }
        }
    }
}

#[device]
fn column() -> usize {
    thread::index_2d().x()
}

fn main() {
    let _ = column;
}
