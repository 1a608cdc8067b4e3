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
// `gpu_printf!` itself is a proc macro (cuda-macros `printf.rs`): it reads the format at compile
// time and expands to calls of the items below.

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
    /// `bool` (`%d` in a C format; `true`/`false` for `{}`).
    pub const BOOL: u8 = 5;
    /// `char` (`%c`).
    pub const CHAR: u8 = 6;
}

/// A value `gpu_printf!` accepts: integers, floats, `bool`, `char`, raw pointers, `&CStr`. It is
/// passed the way C passes variadic arguments (`f32` as `f64`, small integers as 32 bits).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be printed by `gpu_printf!`",
    label = "not printable on the device",
    note = "gpu_printf! prints integers, f32/f64, bool, char, raw pointers and &CStr (the device has no `Display`)"
)]
pub trait PrintfArg: Copy {
    /// Its class in `kind`.
    #[doc(hidden)]
    const CLASS: u8;
    /// Printed with `%d` rather than `%u` by `{}`.
    #[doc(hidden)]
    const SIGNED: bool;
    #[doc(hidden)]
    type Promoted: Copy;
    #[doc(hidden)]
    fn promote(self) -> Self::Promoted;
    /// Appends the value for a Rust-style placeholder (`bool` becomes the string `true`/`false`).
    #[doc(hidden)]
    #[inline(always)]
    fn push_rust<const W: usize>(self, args: &mut PrintfArgs<W>) {
        args.push_raw(self.promote());
    }
}

macro_rules! printf_arg {
    ($($t:ty => $p:ty, $class:ident, $signed:expr;)*) => {$(
        impl PrintfArg for $t {
            const CLASS: u8 = kind::$class;
            const SIGNED: bool = $signed;
            type Promoted = $p;
            #[inline(always)]
            fn promote(self) -> $p {
                self as $p
            }
        }
    )*};
}
printf_arg! {
    i8 => i32, INT, true; i16 => i32, INT, true; i32 => i32, INT, true;
    u8 => u32, INT, false; u16 => u32, INT, false; u32 => u32, INT, false;
    i64 => i64, LONG, true; isize => i64, LONG, true; u64 => u64, LONG, false; usize => u64, LONG, false;
    f32 => f64, FLOAT, true; f64 => f64, FLOAT, true;
    char => u32, CHAR, false;
}

impl PrintfArg for bool {
    const CLASS: u8 = kind::BOOL;
    const SIGNED: bool = false;
    type Promoted = u32;
    #[inline(always)]
    fn promote(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn push_rust<const W: usize>(self, args: &mut PrintfArgs<W>) {
        let text: &'static core::ffi::CStr = if self { c"true" } else { c"false" };
        args.push_raw(text.as_ptr() as usize as u64);
    }
}

macro_rules! printf_ptr {
    ($($t:ty),*) => {$(
        impl<T> PrintfArg for $t {
            const CLASS: u8 = kind::PTR;
            const SIGNED: bool = false;
            type Promoted = u64;
            #[inline(always)]
            fn promote(self) -> u64 {
                self as usize as u64
            }
        }
    )*};
}
printf_ptr!(*const T, *mut T);

impl PrintfArg for &core::ffi::CStr {
    const CLASS: u8 = kind::STR;
    const SIGNED: bool = false;
    type Promoted = u64;
    #[inline(always)]
    fn promote(self) -> u64 {
        self.as_ptr() as usize as u64
    }
}

/// Types that fit C conversion class `K` (see `kind`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not match its `gpu_printf!` conversion",
    label = "this argument's type does not fit the conversion at its place in the format",
    note = "%d %i %u %x %o %c: 32-bit integers, bool, char; %ld %lu %lx: 64-bit integers, usize; \
            %f %e %g: f32, f64; %s: &CStr, *const u8; %p: raw pointers"
)]
pub trait Conversion<const K: u8>: PrintfArg {}

macro_rules! conversion {
    ($k:ident: $($t:ty),*) => {$( impl Conversion<{ kind::$k }> for $t {} )*};
}
conversion!(INT: i8, i16, i32, u8, u16, u32, bool, char);
conversion!(LONG: i64, u64, isize, usize);
conversion!(FLOAT: f32, f64);
conversion!(STR: &core::ffi::CStr, *const u8, *const i8, *mut u8, *mut i8);
impl<T> Conversion<{ kind::PTR }> for *const T {}
impl<T> Conversion<{ kind::PTR }> for *mut T {}
impl Conversion<{ kind::PTR }> for &core::ffi::CStr {}

/// `value` unchanged; the bound makes an unprintable argument an error at the argument.
#[doc(hidden)]
#[inline(always)]
pub fn printable<T: PrintfArg>(value: T) -> T {
    value
}

/// Appends `value` for a C conversion of class `K` (the bound is checked at the argument).
#[doc(hidden)]
#[inline(always)]
pub fn push_c<T: Conversion<K>, const K: u8, const W: usize>(args: &mut PrintfArgs<W>, value: T) {
    args.push_raw(value.promote());
}

/// One C conversion (`%08.3lx`), built at compile time for a Rust-style placeholder.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct CSpec {
    bytes: [u8; 24],
    len: usize,
}

impl CSpec {
    const fn push(mut self, b: u8) -> CSpec {
        self.bytes[self.len] = b;
        self.len += 1;
        self
    }

    const fn number(mut self, mut n: u32) -> CSpec {
        let mut digits = [0u8; 10];
        let mut k = 0;
        loop {
            digits[k] = b'0' + (n % 10) as u8;
            k += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        while k > 0 {
            k -= 1;
            self = self.push(digits[k]);
        }
        self
    }
}

/// The C conversion for a Rust-style placeholder with `flags` (C's `-+#0`), `width` (0: none),
/// `precision` (`u32::MAX`: none) and type character `ty` (`b'?'` for `{}`), for an argument of
/// type `T`. Evaluated at compile time; a type character that does not fit `T` stops the build.
#[doc(hidden)]
pub const fn rust_spec<T: PrintfArg>(flags: &str, width: u32, precision: u32, ty: u8) -> CSpec {
    let class = T::CLASS;
    let integer = class == kind::INT || class == kind::LONG;
    let conv = match ty {
        b'?' => match class {
            kind::INT | kind::LONG => {
                if T::SIGNED {
                    b'd'
                } else {
                    b'u'
                }
            }
            kind::FLOAT => {
                if precision == u32::MAX {
                    b'g'
                } else {
                    b'f'
                }
            }
            kind::BOOL | kind::STR => b's',
            kind::CHAR => b'c',
            _ => b'p',
        },
        b'x' | b'X' | b'o' => {
            if !integer {
                panic!("gpu_printf!: `{{:x}}`, `{{:X}}` and `{{:o}}` need an integer argument");
            }
            ty
        }
        b'e' | b'E' | b'f' | b'g' | b'G' => {
            if class != kind::FLOAT {
                panic!("gpu_printf!: `{{:e}}`, `{{:f}}` and `{{:g}}` need an f32 or f64 argument");
            }
            ty
        }
        _ => {
            if class != kind::PTR && class != kind::STR {
                panic!("gpu_printf!: `{{:p}}` needs a raw pointer or &CStr argument");
            }
            b'p'
        }
    };
    let mut spec = CSpec { bytes: [0; 24], len: 0 }.push(b'%');
    let f = flags.as_bytes();
    let mut i = 0;
    while i < f.len() {
        spec = spec.push(f[i]);
        i += 1;
    }
    if width > 0 {
        spec = spec.number(width);
    }
    if precision != u32::MAX && class != kind::BOOL {
        spec = spec.push(b'.').number(precision);
    }
    if class == kind::LONG && integer {
        spec = spec.push(b'l');
    }
    spec.push(conv)
}

/// The NUL-terminated C format of a Rust-style one: its literal pieces (with `%` already
/// escaped) around the conversions of its placeholders, in a buffer of `N` bytes (the rest NUL).
#[doc(hidden)]
pub const fn assemble<const N: usize>(pieces: &[&str], specs: &[CSpec]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut at = 0;
    let mut p = 0;
    while p < pieces.len() {
        let bytes = pieces[p].as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            out[at] = bytes[i];
            at += 1;
            i += 1;
        }
        if p < specs.len() {
            let spec = specs[p];
            let mut k = 0;
            while k < spec.len {
                out[at] = spec.bytes[k];
                at += 1;
                k += 1;
            }
        }
        p += 1;
    }
    if at >= N {
        panic!("gpu_printf!: the format does not fit its buffer (a bug in cuda-oxide)");
    }
    out
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

    /// Appends an already promoted value, aligned to its size.
    #[inline(always)]
    pub fn push_raw<P: Copy>(&mut self, p: P) {
        let size = core::mem::size_of::<P>();
        let off = (self.offset + size - 1) & !(size - 1);
        // SAFETY: W words hold W values of at most 8 bytes each with their alignment padding.
        unsafe {
            let base = self.words.as_mut_ptr().cast::<u8>();
            base.add(off).cast::<P>().write(p);
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

/// Calls `vprintf` with a format assembled at compile time ([`assemble`]).
#[doc(hidden)]
#[inline(always)]
pub fn vprintf_bytes<const N: usize>(format: &'static [u8; N], args: *const u8) -> i32 {
    intrinsics::vprintf(format.as_ptr(), args)
}

/// Reports a failed `gpu_assert!` and stops the kernel; the host sees `CUDA_ERROR_ASSERT`.
#[doc(hidden)]
#[cold]
#[inline(never)]
pub fn assert_failed(message_nul: &'static str, file_nul: &'static str, line: u32) -> ! {
    intrinsics::assert_fail(message_nul.as_ptr(), file_nul.as_ptr(), line, c"kernel".as_ptr().cast())
}

/// `assert` on the device: when `cond` is false, prints `assertion failed: <cond>` (and the
/// optional `gpu_printf!`-style message) with the file and line, and stops the kernel. The
/// launch then fails: the host sees `CUDA_ERROR_ASSERT` at the next synchronization, and the
/// context cannot be used afterwards (as with CUDA's `assert`).
///
/// ```ignore
/// gpu_assert!(i < n);
/// gpu_assert!(x >= 0.0, "x = %f at %u\n", x, i);
/// gpu_assert!(x >= 0.0, "x = {} at {}\n", x, i);
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
