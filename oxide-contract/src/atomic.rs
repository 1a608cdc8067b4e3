//! Operation, scope and ordering codes of the generic atomic intrinsics: `cuda_device` passes them
//! as const generic `u8`s (`atomic_rmw::<T, OP, SCOPE>`, `atomic_load::<T, SCOPE, ORDER>`), the
//! backend turns them into `atomicrmw` operations, NVPTX `syncscope`s and LLVM orderings.

/// The read-modify-write operation of `atomic_rmw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AtomicOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    /// Signed or unsigned minimum, by the element type.
    Min,
    Max,
    Exch,
    /// `atomicInc`: `old >= val ? 0 : old + 1` (unsigned).
    Inc,
    /// `atomicDec`: `old == 0 || old > val ? val : old - 1` (unsigned).
    Dec,
}

impl AtomicOp {
    pub const ALL: [AtomicOp; 10] = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::Exch,
        AtomicOp::Inc,
        AtomicOp::Dec,
    ];

    /// Inverse of `op as u8`.
    pub fn from_code(code: u8) -> Option<AtomicOp> {
        AtomicOp::ALL.get(usize::from(code)).copied()
    }
}

/// Which threads an atomic is atomic with respect to (CUDA's `_block` / `_system` suffixes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AtomicScope {
    Block,
    /// The thread block cluster (sm_90).
    Cluster,
    Device,
    System,
}

impl AtomicScope {
    pub const ALL: [AtomicScope; 4] =
        [AtomicScope::Block, AtomicScope::Cluster, AtomicScope::Device, AtomicScope::System];

    /// Inverse of `scope as u8`.
    pub fn from_code(code: u8) -> Option<AtomicScope> {
        AtomicScope::ALL.get(usize::from(code)).copied()
    }
}

/// The memory ordering of `atomic_load`, `atomic_store`, `atomic_rmw_ordered` and
/// `atomic_cas_ordered` (the meanings of `core::sync::atomic::Ordering`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AtomicOrdering {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

impl AtomicOrdering {
    pub const ALL: [AtomicOrdering; 5] = [
        AtomicOrdering::Relaxed,
        AtomicOrdering::Acquire,
        AtomicOrdering::Release,
        AtomicOrdering::AcqRel,
        AtomicOrdering::SeqCst,
    ];

    /// Inverse of `ordering as u8`.
    pub fn from_code(code: u8) -> Option<AtomicOrdering> {
        AtomicOrdering::ALL.get(usize::from(code)).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for op in AtomicOp::ALL {
            assert_eq!(AtomicOp::from_code(op as u8), Some(op));
        }
        for s in AtomicScope::ALL {
            assert_eq!(AtomicScope::from_code(s as u8), Some(s));
        }
        for o in AtomicOrdering::ALL {
            assert_eq!(AtomicOrdering::from_code(o as u8), Some(o));
        }
        assert_eq!(AtomicOrdering::from_code(5), None);
        assert_eq!(AtomicOp::from_code(10), None);
        assert_eq!(AtomicScope::from_code(4), None);
    }
}
