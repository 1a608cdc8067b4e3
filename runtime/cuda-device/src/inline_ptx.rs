//! How [`ptx_asm!`](crate::ptx_asm) reaches the PTX: each `ptx_asm!` defines a type of its own
//! that implements [`PtxAsmSite`] (the template, the constraints and the options, as written) and
//! [`PtxAsmConst`] for each `"n"`/`"C"` operand, and calls [`crate::intrinsics::ptx_asm`] with
//! that type, a tuple of the register inputs and room for a tuple of the outputs. The device
//! compiler gives each such call an LLVM `asm` statement built from the constants; on the host it
//! panics, like every device operation.
//!
//! ```
//! # use cuda_device::{DisjointSlice, cuda_module, kernel, ptx_asm, thread};
//! #[cuda_module]
//! mod kernels {
//!     use super::*;
//!
//!     /// `out[i] = 2 * i + lane`, the addition written in PTX.
//!     #[kernel]
//!     pub fn doubled(mut out: DisjointSlice<u32>) {
//!         let idx = thread::index_1d();
//!         let i = idx.get() as u32;
//!         let (twice, lane): (u32, u32);
//!         // SAFETY: the statements read and write only their operands.
//!         unsafe {
//!             ptx_asm!("add.u32 %0, %1, %1;", out("=r") twice, in("r") i, options(register_only));
//!             ptx_asm!("mov.u32 %0, %%laneid;", out("=r") lane);
//!         }
//!         if let Some(o) = out.get_mut(idx) {
//!             *o = twice + lane;
//!         }
//!     }
//! }
//! # fn main() {}
//! ```

/// One `ptx_asm!` statement, as `ptx_asm!` checked it (generated; not for hand use).
#[doc(hidden)]
pub trait PtxAsmSite {
    /// The template as written: `%N` operands, `%%` for `%`.
    const TEMPLATE: &'static str;
    /// The constraint of each operand in order, comma-separated (`=r,+l,r,C`).
    const OPERANDS: &'static str;
    /// `register_only`, `may_diverge`, `memory` (a `clobber("memory")`), comma-separated.
    const OPTIONS: &'static str;
}

/// The constant operand `K` of a `ptx_asm!` statement (generated; not for hand use): `BYTES` for a
/// `"C"` operand, `VALUE` for an `"n"` one.
#[doc(hidden)]
pub trait PtxAsmConst<const K: usize> {
    /// The text of a `"C"` operand (up to its first NUL).
    const BYTES: &'static [u8] = &[];
    /// The value of an `"n"` operand.
    const VALUE: i64 = 0;
}
