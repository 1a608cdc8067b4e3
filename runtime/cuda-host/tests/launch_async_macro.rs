//! `cuda_launch_async!` accepts the forms of `cuda_launch!` without `stream:` and evaluates to a
//! `DeviceOperation` (compile-only: no GPU needed). Needs the `async` feature.
#![cfg(feature = "async")]

use std::sync::Arc;

use cuda_async::device_operation::DeviceOperation;
use cuda_core::{DeviceBuffer, LaunchConfig, Module};
use cuda_host::{LoadedBundle, cuda_launch_async};

#[derive(Clone, Copy)]
struct Params {
    _scale: f32,
}

/// A generic kernel stand-in: a launch by path names (and so needs) the function; its
/// arguments are checked against the parameters and `_` is inferred from them.
fn map<T, F: Fn(f32) -> f32>(_: F, _: u32, _: Params, _: &mut [T], _: ()) {}

#[allow(dead_code)]
fn forms(module: &Arc<Module>, bundle: &LoadedBundle, a: &DeviceBuffer<f32>, c: &mut DeviceBuffer<f32>) {
    let k = 2.0f32;
    let config = LaunchConfig::for_num_elems(1024);
    // SAFETY: compile-only; nothing runs.
    let op: DeviceOperation<'_, ()> = unsafe {
        cuda_launch_async! {
            kernel: vecadd,
            module: module,
            config: config,
            args: [slice(a), slice(&a), slice_mut(c)]
        }
    };
    let _ = op;
    // SAFETY: compile-only; nothing runs.
    let op = unsafe {
        cuda_launch_async! {
            kernel: map::<f32, _>,
            module: bundle,
            config: LaunchConfig::for_num_elems(8),
            cluster_dim: (2, 1, 1),
            args: [move |x: f32| x * k, 7u32, Params { _scale: k }, slice_mut(*c), ()],
        }
    };
    let _: DeviceOperation<'_, ()> = op;
}

#[test]
fn forms_compile() {}
