//! Misuse of #[kernel]: each kernel below breaks one rule and gets its own error.
#![allow(unexpected_cfgs)]

use cuda_device::kernel;

#[kernel]
pub struct NotAFunction;

#[kernel(fast)]
pub fn with_args() {}

#[kernel]
pub fn returns_value(x: u32) -> u32 {
    x
}

#[kernel]
pub async fn is_async() {}

#[kernel]
pub unsafe extern "C" fn has_abi() {}

#[kernel]
pub fn by_reference(x: &u32, f: impl Fn(u32) -> u32) {
    let _ = f(*x);
}

fn main() {}
