//! The element types NCCL reduces and moves (`NcclType`), and its reduction operators (`ReduceOp`).

use cudarc::nccl::sys::{ncclDataType_t, ncclRedOp_t};

mod sealed {
    pub trait Sealed {}
}

/// An element type NCCL knows: `i8`, `u8`, `i32`, `u32`, `i64`, `u64`, `f16`, `f32`, `f64`.
pub trait NcclType: cuda_core::DeviceCopy + sealed::Sealed {
    /// NCCL's name for the type.
    const DATA_TYPE: ncclDataType_t;
}

macro_rules! nccl_types {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl NcclType for $t {
            const DATA_TYPE: ncclDataType_t = ncclDataType_t::$d;
        }
    )*};
}
nccl_types! {
    i8 => ncclInt8,
    u8 => ncclUint8,
    i32 => ncclInt32,
    u32 => ncclUint32,
    i64 => ncclInt64,
    u64 => ncclUint64,
    f16 => ncclFloat16,
    f32 => ncclFloat32,
    f64 => ncclFloat64,
}

/// How a reduction combines the ranks' elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum (gradients of data-parallel training).
    Sum,
    /// The product.
    Prod,
    /// The largest.
    Max,
    /// The smallest.
    Min,
    /// The mean: the sum divided by the number of ranks (integer types round towards zero).
    Avg,
}

impl ReduceOp {
    pub(crate) fn raw(self) -> ncclRedOp_t {
        match self {
            ReduceOp::Sum => ncclRedOp_t::ncclSum,
            ReduceOp::Prod => ncclRedOp_t::ncclProd,
            ReduceOp::Max => ncclRedOp_t::ncclMax,
            ReduceOp::Min => ncclRedOp_t::ncclMin,
            ReduceOp::Avg => ncclRedOp_t::ncclAvg,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_and_ops_map_to_nccls_codes() {
        // The codes of nccl.h: a wrong one would reduce garbage without an error.
        assert_eq!(<f32 as NcclType>::DATA_TYPE as u32, 7);
        assert_eq!(<f64 as NcclType>::DATA_TYPE as u32, 8);
        assert_eq!(<f16 as NcclType>::DATA_TYPE as u32, 6);
        assert_eq!(<i32 as NcclType>::DATA_TYPE as u32, 2);
        assert_eq!(<u64 as NcclType>::DATA_TYPE as u32, 5);
        assert_eq!(<u8 as NcclType>::DATA_TYPE as u32, 1);
        assert_eq!(ReduceOp::Sum.raw() as u32, 0);
        assert_eq!(ReduceOp::Avg.raw() as u32, 4);
    }
}
