//! Tensor maps for the tensor memory accelerator (TMA, sm_90): [`TensorMap::tiled_2d`] and
//! [`TensorMap::tiled_3d`] encode a row-major tensor in device memory and the box (tile) one copy
//! moves, with `cuTensorMapEncodeTiled`. Kernels take the map by value (`map: TensorMap`, a
//! grid-constant parameter, CUDA's `const __grid_constant__ CUtensorMap`) or read it from global
//! memory (`&[TensorMap]` over a `DeviceBuffer<TensorMap>`); see `cuda_device::tma`.

use cudarc::driver::sys;

use crate::error::DriverError;

/// An encoded `CUtensorMap`: 128 opaque bytes, 64-byte aligned as the hardware requires.
/// As a kernel parameter by value it stays in parameter memory (the backend knows it by its
/// `oxide::lang` attribute), where TMA reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
#[cfg_attr(cuda_oxide, oxide::lang = "tensor_map")]
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
    /// Any 1-byte element: `u8`, `i8`, and the fp8 types (`cuda_device::fp8::{E4M3, E5M2}`):
    /// TMA moves bytes; the kernel's instructions give them their type.
    U8,
}

impl TmaElement {
    fn bytes(self) -> u64 {
        match self {
            TmaElement::Bf16 | TmaElement::F16 => 2,
            TmaElement::F32 => 4,
            TmaElement::U8 => 1,
        }
    }
    fn sys(self) -> sys::CUtensorMapDataType {
        match self {
            TmaElement::Bf16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            TmaElement::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            TmaElement::F32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            TmaElement::U8 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
        }
    }
}

/// How TMA lays a box out in shared memory (must match the kernel's descriptors).
///
/// Without a swizzle the box lands row after row. With one, the 16-byte chunks of each 128-byte
/// line are permuted: chunk `c` of line `l` lands at chunk `c ^ (l % 8)` (128-byte swizzle; `% 4`
/// and `% 2` for 64 and 32 bytes), so that a column of the tile is spread over the banks of
/// shared memory instead of hitting one. [`TmaSwizzle::apply`] says where a byte lands, in a
/// tile aligned to [`TmaSwizzle::alignment`] bytes; the same permutation is a `wgmma` matrix
/// descriptor's layout type.
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

impl TmaSwizzle {
    /// Where byte `offset` of the box (row-major, as in global memory) lands in a shared tile
    /// aligned to [`TmaSwizzle::alignment`]: bits 4.. of the offset (the 16-byte chunk) XOR-ed with
    /// bits 7.. (the 128-byte line), 3 bits for [`TmaSwizzle::B128`], 2 for `B64`, 1 for `B32`,
    /// none for [`TmaSwizzle::None`]. A kernel reading a swizzled tile element by element uses it
    /// (as CuTe's `Swizzle<3, 4, 3>` for 128 bytes); applying it twice gives `offset` back.
    ///
    /// ```
    /// use cuda_core::tma::TmaSwizzle;
    /// // f32 (row 3, column 5) of a box with 128-byte rows: byte 3 * 128 + 5 * 4 = 404, in
    /// // chunk 1 of line 3, lands in chunk 1 ^ 3 = 2 of that line.
    /// assert_eq!(TmaSwizzle::B128.apply(404), 3 * 128 + 2 * 16 + 4);
    /// assert_eq!(TmaSwizzle::None.apply(404), 404);
    /// ```
    #[inline]
    pub const fn apply(self, offset: usize) -> usize {
        let bits = match self {
            TmaSwizzle::None => 0,
            TmaSwizzle::B32 => 1,
            TmaSwizzle::B64 => 2,
            TmaSwizzle::B128 => 3,
        };
        offset ^ (((offset >> 7) & ((1 << bits) - 1)) << 4)
    }

    /// The alignment (bytes) of a shared tile that TMA fills or reads with this swizzle: 128
    /// (TMA's minimum) without one, else the span after which the permutation repeats (256, 512,
    /// 1024), because the hardware swizzles by the address, not by the offset in the tile.
    #[inline]
    pub const fn alignment(self) -> usize {
        match self {
            TmaSwizzle::None => 128,
            TmaSwizzle::B32 => 256,
            TmaSwizzle::B64 => 512,
            TmaSwizzle::B128 => 1024,
        }
    }

    /// The widest box row (bytes) this swizzle allows.
    fn span(self) -> u64 {
        match self {
            TmaSwizzle::None => u64::MAX,
            TmaSwizzle::B32 => 32,
            TmaSwizzle::B64 => 64,
            TmaSwizzle::B128 => 128,
        }
    }
    fn sys(self) -> sys::CUtensorMapSwizzle {
        match self {
            TmaSwizzle::None => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            TmaSwizzle::B32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            TmaSwizzle::B64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            TmaSwizzle::B128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        }
    }
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
        encode("tiled_2d", base, elem, &[cols, rows], &[box_cols, box_rows], swizzle)
    }

    /// The map of a row-major `depth × rows × cols` tensor of `elem` at device address `base`
    /// (dense: row stride `cols`, slice stride `rows × cols` elements), copied in boxes of
    /// `box_depth × box_rows × box_cols`, which land in shared memory slice after slice, row
    /// after row. Kernels address a box by (`x` = column, `y` = row, `z` = slice); out-of-bounds
    /// parts read as zero and are not written.
    ///
    /// Errors (before asking the driver) as [`TensorMap::tiled_2d`]; the slice stride must also
    /// be below 2⁴⁰ bytes.
    pub fn tiled_3d(
        base: u64,
        elem: TmaElement,
        [depth, rows, cols]: [u64; 3],
        [box_depth, box_rows, box_cols]: [u32; 3],
        swizzle: TmaSwizzle,
    ) -> Result<TensorMap, DriverError> {
        encode("tiled_3d", base, elem, &[cols, rows, depth], &[box_cols, box_rows, box_depth], swizzle)
    }
}

/// `cuTensorMapEncodeTiled` of a dense row-major tensor: `dims` and `boxes` innermost first.
fn encode(
    who: &str,
    base: u64,
    elem: TmaElement,
    dims: &[u64],
    boxes: &[u32],
    swizzle: TmaSwizzle,
) -> Result<TensorMap, DriverError> {
    let bad = |what: String| Err(DriverError::InvalidConfig { message: format!("TensorMap::{who}: {what}") });
    let row_bytes = dims[0] * elem.bytes();
    let box_row_bytes = boxes[0] as u64 * elem.bytes();
    if !base.is_multiple_of(16) {
        return bad(format!("the tensor's address {base:#x} is not 16-byte aligned"));
    }
    if dims.contains(&0) {
        return bad(format!("extents {dims:?} (innermost first) must all be positive"));
    }
    if !row_bytes.is_multiple_of(16) {
        return bad(format!("a row of {} elements is {row_bytes} bytes, not a multiple of 16", dims[0]));
    }
    if boxes.iter().any(|b| !(1..=256).contains(b)) {
        return bad(format!("box {boxes:?} (innermost first): each side must be 1..=256"));
    }
    if !box_row_bytes.is_multiple_of(16) || box_row_bytes > swizzle.span() {
        return bad(format!(
            "a box row of {box_row_bytes} bytes must be a multiple of 16 and at most the swizzle span ({swizzle:?})"
        ));
    }
    // Byte strides of dimensions 1.. (dense): each a multiple of 16 (the row's is) below 2^40.
    let strides: Vec<u64> = (1..dims.len()).map(|d| dims[..d].iter().product::<u64>() * elem.bytes()).collect();
    if let Some(s) = strides.iter().find(|&&s| s >= 1 << 40) {
        return bad(format!("a stride of {s} bytes is not below 2^40"));
    }
    let element_strides = vec![1u32; dims.len()];
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    // SAFETY: `dims`, `boxes` and `element_strides` have the rank's length, `strides` one less;
    // `map` is writable.
    let r = unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            elem.sys(),
            dims.len() as u32,
            base as *mut core::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            element_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle.sys(),
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(DriverError::from_cuda(r, "cuTensorMapEncodeTiled"));
    }
    Ok(TensorMap { opaque: map.opaque })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules refused before the driver is asked (no GPU needed), each with what is wrong.
    fn refused(r: Result<TensorMap, DriverError>) -> String {
        match r {
            Err(DriverError::InvalidConfig { message }) => message,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// The swizzles are CuTe's `Swizzle<B, 4, 3>` on byte offsets (B = 3, 2, 1): each a
    /// permutation of its aligned span that keeps 16-byte chunks whole and is its own inverse.
    #[test]
    fn swizzles_permute_16_byte_chunks_within_their_span() {
        for swz in [TmaSwizzle::None, TmaSwizzle::B32, TmaSwizzle::B64, TmaSwizzle::B128] {
            let span = swz.alignment().max(1024);
            let mut seen = vec![false; span];
            for o in 0..span {
                let to = swz.apply(o);
                assert!(to < span && !seen[to], "{swz:?}: {o} -> {to}");
                seen[to] = true;
                assert_eq!(to % 16, o % 16, "{swz:?} splits a chunk");
                assert_eq!(swz.apply(to), o, "{swz:?} is not its own inverse");
            }
        }
        // 128 bytes: line l's chunk c goes to chunk c ^ (l % 8); 32 bytes: c ^ ((l % 2) at bit 0).
        assert_eq!(TmaSwizzle::B128.apply(7 * 128 + 16), 7 * 128 + 6 * 16);
        assert_eq!(TmaSwizzle::B128.apply(9 * 128), 9 * 128 + 16);
        assert_eq!(TmaSwizzle::B64.apply(7 * 128 + 16), 7 * 128 + 2 * 16);
        assert_eq!(TmaSwizzle::B32.apply(128 + 16), 128);
        assert_eq!(TmaSwizzle::None.apply(7 * 128 + 16), 7 * 128 + 16);
    }

    #[test]
    fn tiled_3d_checks_the_hardware_rules() {
        let m = |base, dims, boxes, swz| TensorMap::tiled_3d(base, TmaElement::F32, dims, boxes, swz);
        let msg = refused(m(8, [2, 4, 8], [1, 1, 4], TmaSwizzle::None));
        assert!(msg.starts_with("TensorMap::tiled_3d:") && msg.contains("16-byte aligned"), "{msg}");
        assert!(refused(m(0, [2, 4, 6], [1, 1, 4], TmaSwizzle::None)).contains("not a multiple of 16"));
        assert!(refused(m(0, [0, 4, 8], [1, 1, 4], TmaSwizzle::None)).contains("positive"));
        assert!(refused(m(0, [2, 4, 8], [300, 1, 4], TmaSwizzle::None)).contains("1..=256"));
        // A 64-byte box row is wider than the 32-byte swizzle span.
        assert!(refused(m(0, [2, 4, 64], [1, 1, 16], TmaSwizzle::B32)).contains("swizzle span"));
        // 2^20 × 2^20 f32 slices: the slice stride is 2^42 bytes.
        assert!(refused(m(0, [2, 1 << 20, 1 << 20], [1, 1, 4], TmaSwizzle::None)).contains("2^40"));
        // The 2D form keeps its own name in its messages.
        let msg = refused(TensorMap::tiled_2d(8, TmaElement::Bf16, 4, 8, 1, 8, TmaSwizzle::None));
        assert!(msg.starts_with("TensorMap::tiled_2d:"), "{msg}");
    }
}
