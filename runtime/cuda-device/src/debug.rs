//! Debugging and timing on the device: [`gpu_printf!`](crate::gpu_printf),
//! [`gpu_assert!`](crate::gpu_assert), [`trap`], [`clock64`].

use crate::intrinsics;

/// Aborts the kernel (`trap`); the host sees `CUDA_ERROR_ILLEGAL_INSTRUCTION` at the next sync.
#[inline(always)]
pub fn trap() -> ! {
    intrinsics::trap()
}

/// The SM's 64-bit cycle counter (`%clock64`).
#[inline(always)]
pub fn clock64() -> u64 {
    intrinsics::clock64()
}

/// The SM's 32-bit cycle counter (`%clock`).
#[inline(always)]
pub fn clock() -> u32 {
    intrinsics::clock()
}

/// A global nanosecond timer (`%globaltimer`).
#[inline(always)]
pub fn globaltimer() -> u64 {
    intrinsics::globaltimer()
}

/// Suspends the thread for about `ns` nanoseconds (`nanosleep`, sm_70).
#[inline(always)]
pub fn nanosleep(ns: u32) {
    intrinsics::nanosleep(ns)
}

/// Stops here for a debugger (`brkpt`): under `cuda-gdb` execution halts; without one the kernel
/// fails (the host sees an exception at the next synchronisation).
///
/// ```ignore
/// if bad { debug::breakpoint(); }
/// ```
#[inline(always)]
pub fn breakpoint() {
    intrinsics::breakpoint()
}

/// Signals performance-monitor event `N` (`pmevent N`), which profilers can count. `N` must be in
/// `0..=15`; anything else does not compile.
///
/// ```ignore
/// debug::prof_trigger::<3>();
/// ```
#[inline(always)]
pub fn prof_trigger<const N: u32>() {
    const { assert!(N <= 15, "prof_trigger::<N>: N must be in 0..=15") };
    intrinsics::pmevent::<N>()
}

// ---- gpu_printf! support ------------------------------------------------------------------

/// Conversion classes of a printf format: what each argument must be.
#[doc(hidden)]
pub mod kind {
    /// `%d %i %u %x %X %o %c` without a length modifier (or `h`, `hh`): a 32-bit (or smaller) integer.
    pub const INT: u8 = 0;
    /// `%ld %lld %lu %llx %zu …`: a 64-bit integer.
    pub const LONG: u8 = 1;
    /// `%f %e %g %a` (any case): `f32` or `f64` (passed as double).
    pub const FLOAT: u8 = 2;
    /// `%s`: a NUL-terminated string (`&CStr`, `*const u8`, `*const i8`).
    pub const STR: u8 = 3;
    /// `%p`: any raw pointer or reference.
    pub const PTR: u8 = 4;
}

/// A value `gpu_printf!` accepts: integers, floats, `bool`, raw pointers, `&CStr`.
/// It is passed the way C passes variadic arguments (`f32` as `f64`, small integers as `i32`).
pub trait PrintfArg: Copy {
    /// Bit `k` set when the value may be used with conversion class `k` (see `kind`).
    #[doc(hidden)]
    const KINDS: u8;
    #[doc(hidden)]
    type Promoted: Copy;
    #[doc(hidden)]
    fn promote(self) -> Self::Promoted;
}

macro_rules! printf_arg {
    ($($t:ty => $p:ty, $kinds:expr;)*) => {$(
        impl PrintfArg for $t {
            const KINDS: u8 = $kinds;
            type Promoted = $p;
            #[inline(always)]
            fn promote(self) -> $p {
                self as $p
            }
        }
    )*};
}
const I: u8 = 1 << kind::INT;
const L: u8 = 1 << kind::LONG;
const F: u8 = 1 << kind::FLOAT;
const S: u8 = 1 << kind::STR;
const P: u8 = 1 << kind::PTR;
printf_arg! {
    i8 => i32, I; i16 => i32, I; i32 => i32, I; u8 => u32, I; u16 => u32, I; u32 => u32, I;
    i64 => i64, L; u64 => u64, L; isize => i64, L; usize => u64, L;
    f32 => f64, F; f64 => f64, F;
}

impl PrintfArg for bool {
    const KINDS: u8 = I;
    type Promoted = u32;
    #[inline(always)]
    fn promote(self) -> u32 {
        self as u32
    }
}

impl<T> PrintfArg for *const T {
    const KINDS: u8 = S | P;
    type Promoted = u64;
    #[inline(always)]
    fn promote(self) -> u64 {
        self as usize as u64
    }
}

impl<T> PrintfArg for *mut T {
    const KINDS: u8 = S | P;
    type Promoted = u64;
    #[inline(always)]
    fn promote(self) -> u64 {
        self as usize as u64
    }
}

impl PrintfArg for &core::ffi::CStr {
    const KINDS: u8 = S | P;
    type Promoted = u64;
    #[inline(always)]
    fn promote(self) -> u64 {
        self.as_ptr() as usize as u64
    }
}

/// The conversion class of the `index`-th conversion of `fmt`, or 255 when there is none.
/// Panics (at compile time, called in a `const`) on a conversion printf does not know.
#[doc(hidden)]
pub const fn spec_kind(fmt: &str, index: usize) -> u8 {
    let b = fmt.as_bytes();
    let mut i = 0;
    let mut n = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        if i < b.len() && b[i] == b'%' {
            i += 1;
            continue;
        }
        // flags, width, precision
        while i < b.len() && matches!(b[i], b'-' | b'+' | b' ' | b'#' | b'0'..=b'9' | b'.') {
            i += 1;
        }
        if i < b.len() && b[i] == b'*' {
            panic!("gpu_printf!: `*` widths are not supported; write the width into the format string");
        }
        let mut long = false;
        while i < b.len() && matches!(b[i], b'l' | b'h' | b'z' | b'j' | b't' | b'L') {
            if matches!(b[i], b'l' | b'z' | b'j' | b't') {
                long = true;
            }
            i += 1;
        }
        if i >= b.len() {
            panic!("gpu_printf!: the format string ends in the middle of a conversion");
        }
        let k = match b[i] {
            b'd' | b'i' | b'u' | b'x' | b'X' | b'o' | b'c' => {
                if long {
                    kind::LONG
                } else {
                    kind::INT
                }
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => kind::FLOAT,
            b's' => kind::STR,
            b'p' => kind::PTR,
            _ => panic!("gpu_printf!: unknown conversion in the format string (use %d %u %x %ld %f %e %g %s %p %c %%)"),
        };
        if n == index {
            return k;
        }
        n += 1;
        i += 1;
    }
    255
}

/// Checks at compile time that `fmt` has exactly `args` conversions.
#[doc(hidden)]
pub const fn check_format(fmt: &str, args: usize) {
    let mut n = 0;
    while spec_kind(fmt, n) != 255 {
        n += 1;
    }
    if n < args {
        panic!("gpu_printf!: more arguments than conversions in the format string");
    }
    if n > args {
        panic!("gpu_printf!: fewer arguments than conversions in the format string");
    }
}

/// The packed argument buffer of one `gpu_printf!` call (each value aligned to its size, as
/// `vprintf` reads it).
#[doc(hidden)]
#[repr(C, align(8))]
pub struct PrintfArgs<const W: usize> {
    words: [u64; W],
    offset: usize,
}

impl<const W: usize> Default for PrintfArgs<W> {
    #[inline(always)]
    fn default() -> Self {
        PrintfArgs { words: [0; W], offset: 0 }
    }
}

impl<const W: usize> PrintfArgs<W> {
    #[inline(always)]
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `value` for a conversion of class `K`; a mismatch is a compile-time error.
    #[inline(always)]
    pub fn push<T: PrintfArg, const K: u8>(&mut self, value: T) {
        const {
            assert!(
                K < 8 && T::KINDS & (1 << K) != 0,
                "gpu_printf!: an argument's type does not match its conversion (%d/%u/%x/%c: 32-bit \
                 integers or bool, %ld/%lu/%lx: 64-bit integers, %f/%e/%g: f32/f64, %s: &CStr or \
                 *const u8, %p: raw pointers)"
            )
        };
        let p = value.promote();
        let size = core::mem::size_of::<T::Promoted>();
        let off = (self.offset + size - 1) & !(size - 1);
        // SAFETY: W words hold W values of at most 8 bytes each with their alignment padding.
        unsafe {
            let base = self.words.as_mut_ptr().cast::<u8>();
            base.add(off).cast::<T::Promoted>().write(p);
        }
        self.offset = off + size;
    }

    #[inline(always)]
    pub fn as_ptr(&self) -> *const u8 {
        self.words.as_ptr().cast()
    }
}

/// Calls `vprintf` with a NUL-terminated format.
#[doc(hidden)]
#[inline(always)]
pub fn vprintf(format_nul: &'static str, args: *const u8) -> i32 {
    intrinsics::vprintf(format_nul.as_ptr(), args)
}

/// Reports a failed `gpu_assert!` and stops the kernel; the host sees `CUDA_ERROR_ASSERT`.
#[doc(hidden)]
#[cold]
#[inline(never)]
pub fn assert_failed(message_nul: &'static str, file_nul: &'static str, line: u32) -> ! {
    intrinsics::assert_fail(message_nul.as_ptr(), file_nul.as_ptr(), line, c"kernel".as_ptr().cast())
}

/// `printf` on the device (CUDA's `vprintf`): a C format string literal and its arguments.
/// The format is checked at compile time: the number of conversions must equal the number of
/// arguments, and each argument's type must fit its conversion (`%d %i %u %x %c`: 32-bit integers
/// and `bool`; `%ld %lu %lx %lld`: 64-bit integers, `usize`; `%f %e %g`: `f32`/`f64`; `%s`:
/// `&CStr`/`*const u8`; `%p`: raw pointers). Output appears on the host's stdout when the host
/// synchronizes. Returns the number of arguments printed, or a negative value on error.
///
/// ```ignore
/// gpu_printf!("block %u thread %u: x = %f\n", blockIdx_x(), threadIdx_x(), x);
/// ```
#[macro_export]
macro_rules! gpu_printf {
    ($fmt:literal $(,)?) => {{
        const _: () = $crate::debug::check_format($fmt, 0);
        $crate::debug::vprintf(::core::concat!($fmt, "\0"), ::core::ptr::null())
    }};
    ($fmt:literal, $($arg:expr),+ $(,)?) => {{
        const _: () = $crate::debug::check_format($fmt, $crate::__gpu_printf_count!($($arg),+));
        let mut __args = $crate::debug::PrintfArgs::<{ $crate::__gpu_printf_count!($($arg),+) }>::new();
        $crate::__gpu_printf_push!(__args, $fmt, []; $($arg),+);
        $crate::debug::vprintf(::core::concat!($fmt, "\0"), __args.as_ptr())
    }};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_printf_count {
    ($($arg:expr),*) => { 0usize $(+ { let _ = ::core::stringify!($arg); 1usize })* };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_printf_push {
    ($args:ident, $fmt:literal, [$($n:tt)*]; ) => {};
    ($args:ident, $fmt:literal, [$($n:tt)*]; $head:expr $(, $rest:expr)*) => {
        $args.push::<_, { $crate::debug::spec_kind($fmt, 0 $(+ $n)*) }>($head);
        $crate::__gpu_printf_push!($args, $fmt, [$($n)* 1]; $($rest),*);
    };
}

/// `assert` on the device: when `cond` is false, prints `assertion failed: <cond>` (and the
/// optional `gpu_printf!`-style message) with the file and line, and stops the kernel. The
/// launch then fails: the host sees `CUDA_ERROR_ASSERT` at the next synchronization, and the
/// context cannot be used afterwards (as with CUDA's `assert`).
///
/// ```ignore
/// gpu_assert!(i < n);
/// gpu_assert!(x >= 0.0, "x = %f at %u\n", x, i);
/// ```
#[macro_export]
macro_rules! gpu_assert {
    ($cond:expr $(,)?) => {
        if !$cond {
            $crate::debug::assert_failed(
                ::core::concat!(::core::stringify!($cond), "\0"),
                ::core::concat!(::core::file!(), "\0"),
                ::core::line!(),
            )
        }
    };
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            $crate::gpu_printf!($($fmt)+);
            $crate::debug::assert_failed(
                ::core::concat!(::core::stringify!($cond), "\0"),
                ::core::concat!(::core::file!(), "\0"),
                ::core::line!(),
            )
        }
    };
}
