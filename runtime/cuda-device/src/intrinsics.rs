//! Raw device operations. The backend recognises `cuda_device::intrinsics::<name>` and gives each
//! function its PTX body (see `codegen-driver/src/intrinsic/`); the Rust bodies run only on the host.
#![allow(non_snake_case)]

/// What every intrinsic does when called on the host.
#[cold]
#[inline(never)]
#[track_caller]
pub fn device_only(name: &str) -> ! {
    panic!("`cuda_device::intrinsics::{name}` is a device-only function: call it from a #[kernel]")
}

macro_rules! special_registers {
    ($($name:ident),* $(,)?) => {$(
        #[doc = concat!("PTX special register behind `", stringify!($name), "`.")]
        #[inline(never)]
        pub fn $name() -> u32 {
            device_only(stringify!($name))
        }
    )*};
}

special_registers!(
    threadIdx_x, threadIdx_y, threadIdx_z,
    blockIdx_x, blockIdx_y, blockIdx_z,
    blockDim_x, blockDim_y, blockDim_z,
    gridDim_x, gridDim_y, gridDim_z,
    laneid, warpid,
);

/// `bar.sync 0`: every thread of the block waits here.
#[inline(never)]
pub fn sync_threads() {
    device_only("sync_threads")
}

/// `trap`: aborts the kernel; the host sees `CUDA_ERROR_ILLEGAL_INSTRUCTION` at the next sync.
#[inline(never)]
pub fn trap() -> ! {
    device_only("trap")
}
