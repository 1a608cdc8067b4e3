//! Launch contexts: a zero-sized token a `#[kernel(launch_context = name)]` receives, typed by
//! what its `#[launch_contract(domain = D, coordinates = u32)]` promises about every launch
//! (checked by the host before each launch), and the `u32` thread indices only such a promise
//! makes cheap: [`index_1d_u32`], [`coord_2d_u32`].
//!
//! The token is the kernel's last parameter (the macro appends it; a launch passes nothing for
//! it). Device code that calls a kernel function passes its own token, whose type says its own
//! launch keeps the same promise, so no code can hold a token its launch does not back.

use core::marker::PhantomData;

use crate::intrinsics;

/// The launch domain of a kernel without a `#[launch_contract]`: nothing is promised.
#[derive(Clone, Copy, Debug)]
pub enum UnknownDomain {}
/// `#[launch_contract(domain = 1)]`: launches use only the x axis.
#[derive(Clone, Copy, Debug)]
pub enum Domain1 {}
/// `#[launch_contract(domain = 2)]`: launches use only the x and y axes.
#[derive(Clone, Copy, Debug)]
pub enum Domain2 {}
/// `#[launch_contract(domain = 3)]`.
#[derive(Clone, Copy, Debug)]
pub enum Domain3 {}
/// Thread coordinates of any size.
#[derive(Clone, Copy, Debug)]
pub enum NativeCoordinates {}
/// `#[launch_contract(coordinates = u32)]`: every coordinate fits in `u32`
/// (`grid_dim * block_dim <= 2^32` on each axis).
#[derive(Clone, Copy, Debug)]
pub enum U32Coordinates {}

/// The token of `#[kernel(launch_context = name)]`: proof that the running launch keeps the
/// kernel's launch contract (domain `D`, coordinates `C`). Zero-sized; made only by the kernel
/// entry, which the host launches only with a config its contract accepts.
///
/// ```ignore
/// #[kernel(launch_context = lc)]
/// #[launch_contract(domain = 1, coordinates = u32, block = (256, 1, 1))]
/// pub fn scale(mut out: DisjointSlice<f32>) {
///     let i = thread::index_1d_u32(lc);
///     if let Some(mut x) = out.element_thread32(i) { x.write(x.read() * 2.0) }
/// }
/// ```
pub struct LaunchContext<'kernel, D = UnknownDomain, C = NativeCoordinates>(PhantomData<Brand<'kernel, D, C>>);

/// What a [`LaunchContext`] is typed by: the kernel's lifetime, its domain and coordinates.
type Brand<'kernel, D, C> = (&'kernel (), fn() -> (D, C));

/// NVIDIA cuda-oxide's name for the launch context parameter's type (ours is passed by value).
pub type LaunchContextRef<'kernel, D = UnknownDomain, C = NativeCoordinates> = LaunchContext<'kernel, D, C>;

impl<D, C> LaunchContext<'_, D, C> {
    /// The token `#[kernel(launch_context = name)]` binds. Holding one proves nothing by itself:
    /// the functions that rely on the contract ([`index_1d_u32`], [`coord_2d_u32`]) check the
    /// running launch's shape and trap when it breaks the contract, so a launch that bypassed
    /// the host's checks cannot make two threads share an index.
    #[doc(hidden)]
    #[inline(always)]
    pub fn __new() -> Self {
        LaunchContext(PhantomData)
    }
}

impl<D, C> Clone for LaunchContext<'_, D, C> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<D, C> Copy for LaunchContext<'_, D, C> {}

impl<D, C> core::fmt::Debug for LaunchContext<'_, D, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("LaunchContext")
    }
}

/// This thread's index in a 1D launch, in 32 bits: `blockIdx.x * blockDim.x + threadIdx.x`.
/// The contract (domain 1, `u32` coordinates) makes it unique per thread and free of overflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadIndex32(u32);

impl ThreadIndex32 {
    /// The index.
    #[inline(always)]
    pub fn get(self) -> u32 {
        self.0
    }
}

/// This thread's (row, col) in a 2D launch, in 32 bits each; unique per thread under the contract
/// (domain 2, `u32` coordinates).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadCoord2D32 {
    row: u32,
    col: u32,
}

impl ThreadCoord2D32 {
    /// `blockIdx.y * blockDim.y + threadIdx.y`.
    #[inline(always)]
    pub fn row(self) -> u32 {
        self.row
    }

    /// `blockIdx.x * blockDim.x + threadIdx.x`.
    #[inline(always)]
    pub fn col(self) -> u32 {
        self.col
    }
}

/// This thread's index in a launch contracted as 1D with `u32` coordinates, computed in 32 bits.
///
/// ```ignore
/// let i = thread::index_1d_u32(launch_context);
/// ```
#[inline(always)]
pub fn index_1d_u32(_context: LaunchContext<'_, Domain1, U32Coordinates>) -> ThreadIndex32 {
    // The host checks every launch against the contract; checking here too keeps the index
    // unique per thread even for a launch that skipped those checks (a raw launch of the PTX).
    let flat = intrinsics::blockDim_y() == 1
        && intrinsics::blockDim_z() == 1
        && intrinsics::gridDim_y() == 1
        && intrinsics::gridDim_z() == 1;
    let positions = u64::from(intrinsics::gridDim_x()) * u64::from(intrinsics::blockDim_x());
    if !flat || positions > 1 << 32 {
        crate::debug::trap();
    }
    ThreadIndex32(
        intrinsics::blockIdx_x().wrapping_mul(intrinsics::blockDim_x()).wrapping_add(intrinsics::threadIdx_x()),
    )
}

/// This thread's (row, col) in a launch contracted as 2D with `u32` coordinates.
///
/// ```ignore
/// let c = thread::coord_2d_u32(launch_context);
/// if c.row() < m && c.col() < n { /* … */ }
/// ```
#[inline(always)]
pub fn coord_2d_u32(_context: LaunchContext<'_, Domain2, U32Coordinates>) -> ThreadCoord2D32 {
    // As in `index_1d_u32`: a launch with a z extent, or coordinates past u32, traps.
    let positions_x = u64::from(intrinsics::gridDim_x()) * u64::from(intrinsics::blockDim_x());
    let positions_y = u64::from(intrinsics::gridDim_y()) * u64::from(intrinsics::blockDim_y());
    if intrinsics::blockDim_z() != 1 || intrinsics::gridDim_z() != 1 || positions_x > 1 << 32 || positions_y > 1 << 32 {
        crate::debug::trap();
    }
    ThreadCoord2D32 {
        row: intrinsics::blockIdx_y().wrapping_mul(intrinsics::blockDim_y()).wrapping_add(intrinsics::threadIdx_y()),
        col: intrinsics::blockIdx_x().wrapping_mul(intrinsics::blockDim_x()).wrapping_add(intrinsics::threadIdx_x()),
    }
}
