//! Proc macros of cuda-oxide: `#[kernel]`, `#[device]`, `#[launch_bounds]`, `#[cluster_launch]`, `#[cuda_module]`, `#[derive(DeviceCopy)]`,
//! and the code generation hints `#[fast_math]`, `#[unroll]` (inside kernels), `unroll!`.
//!
//! Used through `cuda_device`, which re-exports them. They mark device code with tool attributes
//! behind `cfg(cuda_oxide)` (contract §2), so a plain `cargo build` still compiles the host side,
//! and `#[cuda_module]` generates the loader and one typed launch method per kernel.
#![warn(missing_docs)]

use proc_macro::TokenStream;

mod attrs;
mod constant;
mod contract;
mod device_copy;
mod hints;
mod kernel;
mod launch;
mod module;
mod printf;
mod ptx_asm;
mod renamed;

fn output(result: syn::Result<proc_macro2::TokenStream>) -> TokenStream {
    result.unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Inline PTX in device code, with CUDA C++'s operand syntax: `%N` names operand `N` (outputs
/// first, then inputs, in the order written), `%%` is a literal `%` (`%%laneid`).
///
/// ```ignore
/// let doubled: u32;
/// unsafe { ptx_asm!("add.u32 %0, %1, %1;", out("=r") doubled, in("r") x, options(register_only)) };
/// ```
///
/// Operands: `out("=c") place`, `inout("+c") place` (read, then written back), `in("c") value`,
/// with `c` one of `h` (16-bit), `r` (32-bit), `l` (64-bit or pointer), `q` (128-bit), `f` (`f32`),
/// `d` (`f64`); `in("n") CONST` substitutes an integer constant and `in("C") BYTES` a constant
/// `&[u8; N]` string (up to its NUL) into the text. `clobber("memory")` orders the statement with
/// memory accesses. By default the statement has side effects and stays where it is written;
/// `options(register_only)` declares a pure computation of its operands (it may be merged or
/// removed when unused) and `options(register_only, may_diverge)` also lets it move across
/// branches (never for `.sync` or collective instructions). The call needs `unsafe`.
#[proc_macro]
pub fn ptx_asm(input: TokenStream) -> TokenStream {
    output(ptx_asm::expand(input.into()))
}

/// Marks a function as a GPU kernel (a PTX entry point). It stays an ordinary `pub fn`.
///
/// Parameters follow the kernel ABI: `&[T]`, `&mut [T]`, `DisjointSlice<T>`, scalars, raw
/// pointers, closures and by-value structs. A kernel returns `()`.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    output(kernel::expand_kernel(attr.into(), item.into()))
}

/// Marks a device helper function (informational: everything a kernel calls is compiled for
/// the device anyway).
#[proc_macro_attribute]
pub fn device(attr: TokenStream, item: TokenStream) -> TokenStream {
    output(kernel::expand_device(attr.into(), item.into()))
}

/// `#[fast_math]` on a kernel or device function: it and everything it calls use approximate
/// division, square root, reciprocal square root and transcendentals (like nvcc's
/// `--use_fast_math` for that code only); IEEE results stay the default elsewhere.
#[proc_macro_attribute]
pub fn fast_math(attr: TokenStream, item: TokenStream) -> TokenStream {
    output(hints::expand_fast_math(attr.into(), item.into()))
}

/// `unroll!(for … { … })` unrolls the loop fully, `unroll!(N, for … { /* … */ })` by `N` (also `while`
/// and `loop`); the same as `#[unroll]` / `#[unroll(N)]` on a loop inside a `#[kernel]`.
#[proc_macro]
pub fn unroll(item: TokenStream) -> TokenStream {
    output(hints::expand(item.into()))
}

/// `#[launch_bounds(max_threads_per_block[, min_blocks_per_sm])]` on a `#[kernel]`: tells the
/// compiler the largest block size the kernel is launched with; launches are checked against it.
#[proc_macro_attribute]
pub fn launch_bounds(attr: TokenStream, item: TokenStream) -> TokenStream {
    output(kernel::expand_kernel_option(attrs::Marker::LaunchBounds, attr.into(), item.into()))
}

/// `#[launch_contract(domain = 1, coordinates = u32, block = (256, 1, 1), ..)]` on a `#[kernel]`:
/// what every launch of it keeps. Launches are checked against it (the `#[cuda_module]` methods
/// `prepare_<kernel>` and `<kernel>(&stream, &prepared, ..)`, and every other launch path through
/// the kernel's manifest entry); an exact `block` becomes `.reqntid`; `requires = (a.len() >= n)`
/// relations are checked by the generated launch method.
#[proc_macro_attribute]
pub fn launch_contract(attr: TokenStream, item: TokenStream) -> TokenStream {
    output(kernel::expand_launch_contract(attr.into(), item.into()))
}

/// `#[cluster_launch(x, y, z)]` on a `#[kernel]`: launch with thread block clusters of this
/// shape (sm_90+; at most 16 blocks, 8 portably).
#[proc_macro_attribute]
pub fn cluster_launch(attr: TokenStream, item: TokenStream) -> TokenStream {
    output(kernel::expand_kernel_option(attrs::Marker::ClusterLaunch, attr.into(), item.into()))
}

/// `#[cooperative_launch]` on a `#[kernel]`: every launch of it is cooperative (all blocks
/// resident at once), which `grid::sync()` needs. The launch checks that the grid fits on the
/// GPU at once (else an error saying how many blocks fit) and launches with
/// `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`; with `#[cluster_launch]` both go into one launch.
/// Nothing changes in the PTX.
#[proc_macro_attribute]
pub fn cooperative_launch(attr: TokenStream, item: TokenStream) -> TokenStream {
    output(kernel::expand_kernel_option(attrs::Marker::CooperativeLaunch, attr.into(), item.into()))
}

/// `#[constant]` on a `static NAME: ConstantMemory<T>` (NVIDIA cuda-oxide's spelling): checks
/// that it is one, and inside a `#[cuda_module]` asks for the host methods
/// `set_<name>(&stream, &value)` and `set_<name>_blocking(&value)` on the loaded module. The
/// static is constant memory by its type alone; the attribute changes nothing on the device.
#[proc_macro_attribute]
pub fn constant(attr: TokenStream, item: TokenStream) -> TokenStream {
    output(constant::expand(attr.into(), item.into()))
}

/// On an inline module of kernels: generates `pub struct Module`, `pub fn load(&ctx)` (loading
/// the device code embedded in this binary) and one typed launch method per kernel.
///
/// ```ignore
/// #[cuda_module]
/// mod kernels {
///     use super::*;
///     #[kernel]
///     pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) { /* .. */ }
/// }
/// let module = kernels::load(&ctx)?;
/// module.vecadd(&stream, LaunchConfig::for_num_elems(1024), &a, &b, &mut c)?;
/// ```
#[proc_macro_attribute]
pub fn cuda_module(attr: TokenStream, item: TokenStream) -> TokenStream {
    output(module::expand(attr.into(), item.into()))
}

/// `printf` on the device (CUDA's `vprintf`), with a format string checked at compile time in
/// either spelling:
///
/// - Rust's: `{}` prints any integer, float, `bool` (`true`/`false`), `char`, pointer or `&CStr`;
///   `{:x}` `{:X}` `{:o}` (integers, `#` for a prefix), `{:e}` `{:E}` `{:.3}` `{:.3f}` `{:g}`
///   (floats), `{:p}` (pointers), widths and `<`/`>` alignment (`{:8}`, `{:08.3}`, `{:<5}`),
///   positions (`{0}`); `{{` and `}}` are braces. `{}` of a float prints like C's `%g`, with a
///   precision like `%.Nf`.
/// - C's: `%d %i %u %x %X %o %c` (32-bit integers, `bool`, `char`), `%ld %lu %lx` (64-bit
///   integers, `usize`), `%f %e %g` (`f32`, `f64`), `%s` (`&CStr`, `*const u8`), `%p` (pointers).
///
/// A wrong format is an error at the literal; an argument whose type does not fit is an error
/// at the argument. Output appears on the host's stdout when the host synchronizes. Returns
/// the number of arguments printed, or a negative value on error.
///
/// ```ignore
/// gpu_printf!("block {} thread {}: x = {:.3}\n", thread::blockIdx_x(), thread::threadIdx_x(), x);
/// gpu_printf!("block %u thread %u: x = %f\n", thread::blockIdx_x(), thread::threadIdx_x(), x);
/// ```
#[proc_macro]
pub fn gpu_printf(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as printf::PrintfInput);
    output(printf::expand(input))
}

/// `#[derive(DeviceCopy)]` on a `Copy` struct whose fields are all `DeviceCopy` (checked at each
/// field): lets it live in a `DeviceBuffer`. Re-exported as `cuda_core::DeviceCopy`.
#[proc_macro_derive(DeviceCopy)]
pub fn derive_device_copy(item: TokenStream) -> TokenStream {
    output(device_copy::expand(item.into(), quote::quote!(::cuda_core::DeviceCopy)))
}

/// The same derive for crates that depend only on `cuda_device`, which re-exports it as
/// `cuda_device::DeviceCopy`.
#[doc(hidden)]
#[proc_macro_derive(DeviceCopyViaDevice)]
pub fn derive_device_copy_via_device(item: TokenStream) -> TokenStream {
    output(device_copy::expand(item.into(), quote::quote!(::cuda_device::__private::cuda_core::DeviceCopy)))
}
