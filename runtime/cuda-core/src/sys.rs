//! The raw CUDA driver API (cudarc's dynamically loaded `sys`), for what this crate does not wrap.
//!
//! Everything of `cudarc::driver::sys` is here under its own name: enums as Rust enums
//! (`CUresult::CUDA_ERROR_ILLEGAL_ADDRESS`), functions as `unsafe fn`s that load the driver on
//! first use. Code written for NVIDIA's cuda-oxide spells enum values the way bindgen does with
//! constified enums, `<enum tag>_<VALUE>`; every value also exists under that name, typed as the
//! enum, so both spellings compare with what the driver returns:
//!
//! ```
//! use cuda_core::sys;
//! assert_eq!(sys::cudaError_enum_CUDA_ERROR_ILLEGAL_ADDRESS, sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
//! assert_eq!(sys::CUevent_flags_enum_CU_EVENT_DEFAULT as u32, 0);
//! ```
//! A driver function called directly returns a `CUresult`; [`IntoResult`](crate::error::IntoResult)
//! turns it into a `Result`. Call [`crate::init`] (or make a [`crate::CudaContext`]) first.

pub use cudarc::driver::sys::*;

pub use generated::bindgen_names::*;

mod generated {
    //! Code generated from cudarc's bindings; see each file's header.
    #[allow(non_upper_case_globals)]
    pub mod bindgen_names;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindgen_names_are_cudarc_values() {
        assert_eq!(cudaError_enum_CUDA_SUCCESS, CUresult::CUDA_SUCCESS);
        assert_eq!(CUevent_flags_enum_CU_EVENT_DISABLE_TIMING, CUevent_flags::CU_EVENT_DISABLE_TIMING);
        assert_eq!(CUtensorMapSwizzle_enum_CU_TENSOR_MAP_SWIZZLE_NONE, CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE);
        // Alias constants of an enum (`impl` consts in the bindings) get a name too.
        assert_eq!(CUctx_flags_enum_CU_CTX_BLOCKING_SYNC, CUctx_flags_enum::CU_CTX_SCHED_BLOCKING_SYNC);
    }
}
