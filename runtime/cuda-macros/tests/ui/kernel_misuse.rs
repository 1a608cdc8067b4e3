//! Misuse of #[kernel]: each kernel below breaks one rule and gets its own error.
#![allow(unexpected_cfgs)]

use cuda_device::kernel;

#[kernel]
pub struct NotAFunction;

#[kernel(fast = 1)]
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

#[kernel(launch_context = lc, launch_context = again)]
pub fn two_contexts() {}

#[cuda_device::launch_contract(domain = 1)]
pub fn contract_without_kernel() {}

#[kernel]
#[cuda_device::launch_contract(block = (32, 1, 1))]
pub fn contract_without_domain() {}

#[kernel]
#[cuda_device::launch_contract(domain = 4)]
pub fn contract_domain_four() {}

#[kernel]
#[cuda_device::launch_contract(domain = 1, block = (16, 16, 1))]
pub fn contract_block_outside_domain() {}

#[kernel]
#[cuda_device::launch_contract(domain = 1, dynamic_shared_alignment = 48)]
pub fn contract_bad_alignment() {}

#[kernel]
#[cuda_device::launch_contract(domain = 1, requires = (n))]
pub fn contract_requires_not_a_relation(n: u32) {}

#[kernel]
#[cuda_device::launch_contract(domain = 1, grid = 3)]
pub fn contract_unknown_key() {}

#[kernel(f32)]
pub fn instance_of_non_generic() {}
