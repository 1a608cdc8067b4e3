//! Compile-time descriptions for policy-generic kernels: shapes, layouts, memory spaces and
//! scopes as types, tiles and atoms built from them, and a [`Policy`] trait with an identifier.
//! All zero-sized: they exist so a generic kernel can read its configuration from a type
//! parameter (`P::Tile`, `<P::Tile as TileSpec>::Shape::ELEMENTS`).
//!
//! ```ignore
//! struct Small;
//! impl Policy for Small { const ID: PolicyId = PolicyId::new(1, 16); }
//! type T = Tile<Shape2<16, 32>, RowMajor, Shared, Block>;
//! const N: Option<usize> = <T as TileSpec>::Shape::ELEMENTS; // Some(512)
//! ```

use core::marker::PhantomData;

/// An extent of up to three dimensions, known at compile time.
///
/// ```ignore
/// assert_eq!(Shape2::<4, 8>::EXTENTS, [4, 8, 1]);
/// ```
pub trait Shape: 'static {
    /// Dimensions (1, 2 or 3).
    const RANK: u8;
    /// The extents, padded with 1s.
    const EXTENTS: [usize; 3];
    /// The element count, `None` if it overflows `usize`.
    const ELEMENTS: Option<usize>;
}

/// A one-dimensional shape of `D0` elements.
///
/// ```ignore
/// assert_eq!(Shape1::<8>::ELEMENTS, Some(8));
/// ```
pub enum Shape1<const D0: usize> {}

/// A two-dimensional shape `D0 × D1`.
///
/// ```ignore
/// assert_eq!(Shape2::<4, 8>::ELEMENTS, Some(32));
/// ```
pub enum Shape2<const D0: usize, const D1: usize> {}

/// A three-dimensional shape `D0 × D1 × D2`.
///
/// ```ignore
/// assert_eq!(Shape3::<2, 4, 8>::RANK, 3);
/// ```
pub enum Shape3<const D0: usize, const D1: usize, const D2: usize> {}

impl<const D0: usize> Shape1<D0> {
    /// `D0`.
    pub const D0: usize = D0;
}

impl<const D0: usize, const D1: usize> Shape2<D0, D1> {
    /// `D0`.
    pub const D0: usize = D0;
    /// `D1`.
    pub const D1: usize = D1;
}

impl<const D0: usize, const D1: usize, const D2: usize> Shape3<D0, D1, D2> {
    /// `D0`.
    pub const D0: usize = D0;
    /// `D1`.
    pub const D1: usize = D1;
    /// `D2`.
    pub const D2: usize = D2;
}

impl<const D0: usize> Shape for Shape1<D0> {
    const RANK: u8 = 1;
    const EXTENTS: [usize; 3] = [D0, 1, 1];
    const ELEMENTS: Option<usize> = Some(D0);
}

impl<const D0: usize, const D1: usize> Shape for Shape2<D0, D1> {
    const RANK: u8 = 2;
    const EXTENTS: [usize; 3] = [D0, D1, 1];
    const ELEMENTS: Option<usize> = D0.checked_mul(D1);
}

impl<const D0: usize, const D1: usize, const D2: usize> Shape for Shape3<D0, D1, D2> {
    const RANK: u8 = 3;
    const EXTENTS: [usize; 3] = [D0, D1, D2];
    const ELEMENTS: Option<usize> = match D0.checked_mul(D1) {
        Some(d01) => d01.checked_mul(D2),
        None => None,
    };
}

/// Declares zero-sized marker types and implements a marker trait for them.
macro_rules! markers {
    ($(#[$doc:meta])* trait $tr:ident: $($(#[$m:meta])* $name:ident),* $(,)?) => {
        $(#[$doc])*
        pub trait $tr: 'static {}
        $(
            $(#[$m])*
            pub enum $name {}
            impl $tr for $name {}
        )*
    };
}

markers! {
    /// How a tile's elements are laid out in memory: `Tile<S, RowMajor, …>`.
    trait Layout:
    /// Rows contiguous.
    RowMajor,
    /// Columns contiguous.
    ColumnMajor,
}

markers! {
    /// Where a tile lives: `Tile<S, L, Shared, …>`.
    trait MemorySpace:
    /// Device (global) memory.
    Global,
    /// Shared memory of a block.
    Shared,
    /// Registers of a thread.
    Register,
    /// Tensor memory (sm_100).
    TensorMemory,
}

markers! {
    /// Which threads own a tile or run an atom together: `Tile<S, L, M, Block>`.
    trait Scope:
    /// One thread.
    Thread,
    /// One warp.
    Warp,
    /// Four warps (a warpgroup, sm_90).
    WarpGroup,
    /// One block.
    Block,
    /// One thread block cluster (sm_90).
    Cluster,
}

/// A tile: shape `S`, layout `L`, in memory space `M`, owned by scope `Q` (zero-sized).
///
/// ```ignore
/// type Stage = Tile<Shape2<64, 32>, RowMajor, Shared, Block>;
/// ```
pub struct Tile<S: Shape, L: Layout, M: MemorySpace, Q: Scope> {
    _shape: PhantomData<fn() -> S>,
    _layout: PhantomData<fn() -> L>,
    _space: PhantomData<fn() -> M>,
    _scope: PhantomData<fn() -> Q>,
}

/// The parts of a [`Tile`] type, as associated types.
///
/// ```ignore
/// fn elements<T: TileSpec>() -> Option<usize> { T::Shape::ELEMENTS }
/// ```
pub trait TileSpec: 'static {
    /// Its shape.
    type Shape: Shape;
    /// Its layout.
    type Layout: Layout;
    /// Its memory space.
    type MemorySpace: MemorySpace;
    /// Its scope.
    type Scope: Scope;
}

impl<S: Shape, L: Layout, M: MemorySpace, Q: Scope> TileSpec for Tile<S, L, M, Q> {
    type Shape = S;
    type Layout = L;
    type MemorySpace = M;
    type Scope = Q;
}

/// A kind of elementary operation (a copy, an MMA), defined by the user: `enum Mma {} impl
/// AtomKind for Mma {}`.
///
/// ```ignore
/// enum CopyAtom {}
/// impl AtomKind for CopyAtom {}
/// ```
pub trait AtomKind: 'static {}

/// An elementary operation of kind `K` over shape `S`, run by scope `Q` (zero-sized).
///
/// ```ignore
/// type A = Atom<CopyAtom, Shape2<16, 32>, Warp>;
/// ```
pub struct Atom<K: AtomKind, S: Shape, Q: Scope> {
    _kind: PhantomData<fn() -> K>,
    _shape: PhantomData<fn() -> S>,
    _scope: PhantomData<fn() -> Q>,
}

/// The parts of an [`Atom`] type, as associated types.
///
/// ```ignore
/// fn scope_of<A: AtomSpec>() {}
/// ```
pub trait AtomSpec: 'static {
    /// Its kind.
    type Kind: AtomKind;
    /// Its shape.
    type Shape: Shape;
    /// Its scope.
    type Scope: Scope;
}

impl<K: AtomKind, S: Shape, Q: Scope> AtomSpec for Atom<K, S, Q> {
    type Kind = K;
    type Shape = S;
    type Scope = Q;
}

/// A policy's identity: a namespace (say, per library) and a value in it.
///
/// ```ignore
/// const ID: PolicyId = PolicyId::new(7, 128);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PolicyId {
    namespace: u64,
    value: u64,
}

impl PolicyId {
    /// The identifier `value` in `namespace`.
    pub const fn new(namespace: u64, value: u64) -> Self {
        PolicyId { namespace, value }
    }

    /// Its namespace.
    pub const fn namespace(self) -> u64 {
        self.namespace
    }

    /// Its value.
    pub const fn value(self) -> u64 {
        self.value
    }
}

/// A kernel configuration as a type: `fn kernel<P: Policy>(…)`, specialised per policy.
///
/// ```ignore
/// enum Fast {}
/// impl Policy for Fast { const ID: PolicyId = PolicyId::new(0, 1); }
/// ```
pub trait Policy: 'static {
    /// Its identifier.
    const ID: PolicyId;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_descriptors() {
        assert_eq!(Shape3::<2, 4, 8>::ELEMENTS, Some(64));
        assert_eq!(Shape2::<{ usize::MAX }, 2>::ELEMENTS, None);
        assert_eq!(Shape2::<4, 8>::EXTENTS, [4, 8, 1]);
        type T = Tile<Shape2<16, 32>, RowMajor, Shared, Block>;
        assert_eq!(<T as TileSpec>::Shape::ELEMENTS, Some(512));
        assert_eq!(core::mem::size_of::<T>(), 0);
        let id = PolicyId::new(3, 9);
        assert_eq!((id.namespace(), id.value()), (3, 9));
    }
}
