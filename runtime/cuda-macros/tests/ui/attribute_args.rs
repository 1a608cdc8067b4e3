//! Attribute arguments out of range, not literals, or on the wrong item.
#![allow(unexpected_cfgs)]

use cuda_device::{cluster_launch, cooperative_launch, device, kernel, launch_bounds};

const N: u32 = 256;

#[kernel]
#[launch_bounds(0)]
pub fn zero_threads() {}

#[kernel]
#[launch_bounds(2048)]
pub fn too_many_threads() {}

#[kernel]
#[launch_bounds(N)]
pub fn not_a_literal() {}

#[kernel]
#[launch_bounds(256, 2, 1)]
pub fn three_args() {}

#[kernel]
#[launch_bounds(256, 0)]
pub fn zero_min_blocks() {}

#[kernel]
#[cluster_launch(0, 1, 1)]
pub fn zero_cluster() {}

#[kernel]
#[cluster_launch(8, 4, 1)]
pub fn huge_cluster() {}

#[kernel]
#[cluster_launch(4, 1)]
pub fn two_dims() {}

#[launch_bounds(128)]
pub fn not_a_kernel() {}

#[kernel]
#[cooperative_launch(2)]
pub fn cooperative_with_args() {}

#[cooperative_launch]
pub fn cooperative_not_a_kernel() {}

#[kernel]
#[cooperative_launch]
#[cooperative_launch]
pub fn cooperative_twice() {}

#[device]
pub static NOT_A_FN: u32 = 0;

fn main() {}
