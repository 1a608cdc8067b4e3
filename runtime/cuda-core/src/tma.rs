//! Tensor maps for the tensor memory accelerator (TMA, sm_90): [`TensorMap::tiled_2d`] encodes a
//! row-major 2D tensor in device memory and the box (tile) one copy moves, with
//! `cuTensorMapEncodeTiled`. Kernels read the map from global memory: copy it into a
//! `DeviceBuffer<TensorMap>` and pass that as `&[TensorMap]` (see `cuda_device::tma`).

use cudarc::driver::sys;

use crate::error::DriverError;

/// An encoded `CUtensorMap`: 128 opaque bytes, 64-byte aligned as the hardware requires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct TensorMap {
    /// The driver's encoding.
    pub opaque: [u64; 16],
}

// SAFETY: plain bytes, no pointers into host memory.
unsafe impl crate::DeviceCopy for TensorMap {}

/// Element types a tensor map can describe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmaElement {
    /// 16-bit brain float.
    Bf16,
    /// 16-bit IEEE half.
    F16,
    /// 32-bit float.
    F32,
}

impl TmaElement {
    fn bytes(self) -> u64 {
        match self {
            TmaElement::Bf16 | TmaElement::F16 => 2,
            TmaElement::F32 => 4,
        }
    }
    fn sys(self) -> sys::CUtensorMapDataType {
        match self {
            TmaElement::Bf16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            TmaElement::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            TmaElement::F32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        }
    }
}

/// How TMA lays a box out in shared memory (must match the kernel's descriptors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmaSwizzle {
    /// Row after row.
    None,
    /// 32-byte swizzle.
    B32,
    /// 64-byte swizzle.
    B64,
    /// 128-byte swizzle (the box's inner dimension at most 128 bytes; shared tiles 1024-aligned).
    B128,
}

impl TensorMap {
    /// The map of a row-major `rows × cols` tensor of `elem` at device address `base` (row
    /// stride `cols` elements), copied in boxes of `box_rows × box_cols`. Out-of-bounds parts of
    /// a box read as zero and are not written.
    ///
    /// Errors (before asking the driver) when the hardware's rules are broken: `base` 16-byte
    /// aligned, the row stride a multiple of 16 bytes, box sides in 1..=256, the box's row a
    /// multiple of 16 bytes and, with a swizzle, no wider than the swizzle span.
    pub fn tiled_2d(
        base: u64,
        elem: TmaElement,
        rows: u64,
        cols: u64,
        box_rows: u32,
        box_cols: u32,
        swizzle: TmaSwizzle,
    ) -> Result<TensorMap, DriverError> {
        let bad = |what: String| Err(DriverError::InvalidConfig { message: format!("TensorMap::tiled_2d: {what}") });
        let row_bytes = cols * elem.bytes();
        let box_row_bytes = box_cols as u64 * elem.bytes();
        let span = match swizzle {
            TmaSwizzle::None => u64::MAX,
            TmaSwizzle::B32 => 32,
            TmaSwizzle::B64 => 64,
            TmaSwizzle::B128 => 128,
        };
        if !base.is_multiple_of(16) {
            return bad(format!("the tensor's address {base:#x} is not 16-byte aligned"));
        }
        if !row_bytes.is_multiple_of(16) || rows == 0 || cols == 0 {
            return bad(format!("a row of {cols} elements is {row_bytes} bytes, not a positive multiple of 16"));
        }
        if !(1..=256).contains(&box_rows) || !(1..=256).contains(&box_cols) {
            return bad(format!("box {box_rows}×{box_cols}: each side must be 1..=256"));
        }
        if !box_row_bytes.is_multiple_of(16) || box_row_bytes > span {
            return bad(format!(
                "a box row of {box_row_bytes} bytes must be a multiple of 16 and at most the swizzle span ({swizzle:?})"
            ));
        }
        let dims = [cols, rows];
        let strides = [row_bytes];
        let boxes = [box_cols, box_rows];
        let element_strides = [1u32, 1];
        let swz = match swizzle {
            TmaSwizzle::None => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            TmaSwizzle::B32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            TmaSwizzle::B64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            TmaSwizzle::B128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        };
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        // SAFETY: every array has the rank's length (2; strides rank - 1); `map` is writable.
        let r = unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut map,
                elem.sys(),
                2,
                base as *mut core::ffi::c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                boxes.as_ptr(),
                element_strides.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                swz,
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        };
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err(DriverError::from_cuda(r, "cuTensorMapEncodeTiled"));
        }
        Ok(TensorMap { opaque: map.opaque })
    }
}
