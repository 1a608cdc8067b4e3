//! GPU test: the differential corpus. Every case is an ordinary Rust function in `cases/` that runs
//! on the CPU and, through a `#[kernel]` wrapper, on the GPU over the same random inputs
//! (`harness::N` of them, output poisoned first, a sync after each launch); integers, bools and
//! chars must be equal, floats within the ulp bound stated below. Prints one line per case and
//! `N passed, N failed`; exits non-zero on any failure.
//!
//! `--cpu-only` (or `CORPUS_CPU_ONLY=1`): no GPU; runs the CPU reference of every case on its
//! inputs (none may panic) and checks the launch configs and the embedded manifest (every kernel
//! present with the expected parameters). `CORPUS_SEED=<u64>` repeats a run's inputs.
#![feature(f16)]

mod cases;
mod harness;

use cuda_core::{CudaContext, DeviceBuffer};
use cuda_device::cuda_module;
use harness::{Env, Mode, Outcome};

/// Expands to the `#[cuda_module]` with one wrapper kernel per case, and `run_cases`, which checks
/// each of them. `module::case(In) -> Out, ulp_bound;`
macro_rules! corpus {
    (
        cases { $( $module:ident :: $name:ident ( $in:ty ) -> $out:ty , $ulp:expr ; )* }
        extra { $($extra:item)* }
    ) => {
        #[cuda_module]
        pub mod kernels {
            use super::*;
            use cuda_device::{DisjointSlice, kernel, thread};

            $(
                #[kernel]
                pub fn $name(input: &[$in], mut out: DisjointSlice<($out, u32)>) {
                    let idx = thread::index_1d();
                    let i = idx.get();
                    if let Some(slot) = out.get_mut(idx) {
                        *slot = (crate::cases::$module::$name(input[i]), crate::harness::WRITTEN);
                    }
                }
            )*

            $($extra)*
        }

        fn run_cases(env: &Env<'_, kernels::Module>) -> Vec<Outcome> {
            vec![$(
                env.check::<$in, $out>(
                    concat!(stringify!($module), "::", stringify!($name)),
                    stringify!($name),
                    $ulp,
                    &crate::cases::$module::$name,
                    &|m, s, c, i, o| m.$name(s, c, i, o),
                ),
            )*]
        }
    };
}

corpus! {
    cases {
        ints::i128_mul_div((i128, i128)) -> [i128; 4], 0;
        ints::u128_ops((u128, u128)) -> [u128; 5], 0;
        ints::wrapping_i8((i8, i8)) -> [i8; 7], 0;
        ints::checked_u16((u16, u16)) -> [(bool, u16); 6], 0;
        ints::saturating_i32((i32, i32)) -> [i32; 6], 0;
        ints::saturating_u64((u64, u64)) -> [u64; 3], 0;
        ints::overflowing_u64((u64, u64)) -> [(u64, bool); 4], 0;
        ints::overflowing_i16((i16, i16)) -> [(i16, bool); 4], 0;
        ints::bits_u32(u32) -> [u32; 9], 0;
        ints::bits_u64(u64) -> [u64; 6], 0;
        ints::bits_small((u8, i16)) -> (u8, u8, u8, i16, i16, u32), 0;
        ints::bits_u128(u128) -> (u32, u32, u32, u128, u128), 0;
        ints::bytes_roundtrip(u64) -> ([u8; 8], [u8; 8], u64, u32, i16, u64), 0;
        ints::euclid_i64((i64, i64)) -> [(bool, i64); 3], 0;
        ints::euclid_i8((i8, i8)) -> (i8, i8, i8), 0;
        ints::shifts_u32((u32, u32)) -> [u32; 5], 0;
        ints::shifts_i128((i128, u32)) -> [i128; 3], 0;
        ints::division_edges_i32((i32, i32)) -> [(bool, i32); 4], 0;
        ints::div_unsigned((u8, u64)) -> (u8, u64, u64, u8), 0;
        ints::int_casts(i64) -> (u8, i8, u16, i32, u32, i128, u128, usize), 0;
        ints::int_to_float((i64, u64, i32)) -> (f64, f32, f32, f64, f32), 0;
        ints::int128_to_float((i128, u128)) -> (f64, f32, f64), 0;
        ints::float_to_int_f32(f32) -> (i8, u8, i32, u32, i64, u64), 0;
        ints::float_to_int_f64(f64) -> (i16, u16, i32, u32, i64, u64), 0;
        ints::float_to_int128(f64) -> (i128, u128), 0;
        ints::pow_log((u32, u8)) -> (u32, (bool, u32), (bool, u32), (bool, u32), u32, bool), 0;
        ints::misc_int((i32, i32)) -> (u32, i32, u32, (bool, u32), i32, i32), 0;
        ints::widening_u64((u64, u64)) -> (u64, u64, u64), 0;
        ints::carrying_mul_add_u32((u32, u32, u32, u32)) -> (u32, u32), 0;
        ints::bool_logic((bool, bool, bool)) -> [bool; 7], 0;
        ints::char_methods(char) -> ((u32, bool, bool, bool), (u32, char, char, usize, bool)), 0;
        ints::char_encode(char) -> ([u8; 4], u8, [u16; 2], u8), 0;
        ints::char_from((u32, u8)) -> ((bool, char), (bool, char), char), 0;

        floats::f32_arith((f32, f32)) -> [f32; 5], 0;
        floats::f64_arith((f64, f64)) -> [f64; 5], 0;
        floats::float_rem((f64, f32)) -> (f64, f32, f64, u16), 0;
        floats::f32_exact_methods((f32, f32)) -> [f32; 14], 0;
        floats::f64_exact_methods((f64, f64)) -> [f64; 14], 0;
        // libdevice: expf/exp2f 2 ulp, logf/log2f/log1pf 1, log10f 2; +1 for the host's libm.
        floats::f32_exp_log(f32) -> [f32; 6], 3;
        // libdevice: exp/exp2/log/log2/log10/log1p 1 ulp; +1 for the host (2 seen on an H200); +1 margin.
        floats::f64_exp_log(f64) -> [f64; 6], 3;
        // libdevice: sinf/cosf 2 ulp, tanf 4, tanhf 2 (whole range); +1 for the host.
        floats::f32_trig(f32) -> [f32; 4], 5;
        // libdevice: sin/cos/tan 2 ulp, tanh 1; +1 for the host.
        floats::f64_trig(f64) -> [f64; 4], 3;
        // libdevice powf over the whole range: up to 40 ulp seen on an H200 where |y| > 200 and
        // the result is > 1e30 (e.g. 1.3787398f32.powf(217.22467)); small exponents stay within
        // 2. That is above CUDA's documented bound (open question: see docs/supported-rust.md).
        floats::f32_pow((f32, f32)) -> [f32; 2], 3;
        // libdevice: pow 2 ulp; +1 for the host.
        floats::f64_pow((f64, f64)) -> [f64; 2], 3;
        // powi: repeated multiplication on both sides, |n| <= 8, in a different order.
        floats::f32_powi((f32, i8)) -> f32, 8;
        floats::f64_powi((f64, i8)) -> f64, 8;
        // libdevice: cbrtf 1 ulp, hypotf 3, atan2f 3; +1 for the host.
        floats::f32_misc_math((f32, f32)) -> [f32; 3], 4;
        // libdevice: cbrt 1 ulp, hypot 2, atan2 2; +1 for the host.
        floats::f64_misc_math((f64, f64)) -> [f64; 3], 3;
        floats::float_classify(f64) -> (bool, bool, bool, bool, bool, u64, u32, f32), 0;
        floats::float_compare((f32, f32)) -> (i8, i8, bool, bool, bool, f64), 0;
        // `(a + SQRT_2) * 0.5` and the products are single roundings: exact.
        floats::float_consts(f32) -> [f32; 3], 0;
        floats::f64_to_f32(f64) -> (f32, f64), 0;
        floats::f16_arith((u16, u16)) -> [u16; 7], 0;

        data::struct_methods(Point) -> (Point, u32, Point), 0;
        data::particle_step(Particle) -> Particle, 1;
        data::tuples_nested(((u8, i64), (bool, u16))) -> ((u16, bool), (i64, u8), u32), 0;
        data::local_arrays([u32; 8]) -> ([u32; 8], [u32; 8], u32), 0;
        data::const_tables((u64, u8)) -> (u32, usize, u32, i16, u8, u32), 0;
        data::enum_match((u32, u16)) -> (u64, u8), 0;
        data::option_combinators((u32, u32)) -> (u64, u32, bool, u32), 0;
        data::result_combinators((i32, i32)) -> (u32, u32, i64), 0;
        data::niches((u32, u32)) -> (u32, u32, u32, bool), 0;

        control::subslices([u32; 16]) -> (u32, u32, (bool, u32), u32, u32), 0;
        control::chunks_windows([u16; 12]) -> (u32, u32, u32, u32), 0;
        control::iterators([i32; 10]) -> [i64; 9], 0;
        control::loops(u64) -> (u32, u64, u32, u32), 0;
        control::binary_search(([u32; 16], u32)) -> (i32, i32, u32), 0;
        control::slice_methods([u8; 16]) -> ([u8; 16], u32, bool, u32), 0;
        control::str_ops(([u8; 8], u32)) -> (bool, u32, u32, u32, u32), 0;

        traits::generic_fns((u32, i16)) -> (u32, i64, u64), 0;
        traits::trait_dispatch(u32) -> (u32, u32, u32), 0;
        traits::const_generics([u8; 8]) -> (u32, u32, i64, i32), 0;
        traits::closures_local((i32, i32)) -> (i32, i64, i32, i32), 0;
        traits::recursion((u32, u64)) -> (u64, u64, bool), 0;
        traits::mem_helpers((u64, u32)) -> ([u16; 4], u32, u64, u32, f32, usize), 0;
        traits::drop_glue(u32) -> (u32, u32), 0;
        traits::operators((i32, i32, i32)) -> (i32, i32, i32, bool), 0;
        traits::user_iterator(u8) -> (u64, u64, u32), 0;
        traits::derives((u8, u32, u8)) -> (u64, i8, bool, u32), 0;
        traits::dyn_dispatch((u32, u8)) -> (u32, u32), 0;
        traits::fn_pointers((u32, u8)) -> (u32, u32), 0;
        traits::other_module(([i16; 3], u8)) -> (i64, i32), 0;
        traits::other_crate((u64, i16)) -> (u64, u8, u32, i32, f64, u32), 0;
        // A sum of squares: the device may contract `acc + x * x` into fma.
        traits::other_crate_generic([f64; 4]) -> f64, 4;
        fuzz_regressions::fuzz_3_467(u64) -> u64, 0;
    }
    extra {
        /// A kernel that takes a closure by value and calls it on the device; instantiated with
        /// two closures whose captures have different types.
        #[kernel]
        pub fn map_closure<F: Fn(u32) -> u32 + Copy>(f: F, input: &[u32], mut out: DisjointSlice<(u32, u32)>) {
            let idx = thread::index_1d();
            let i = idx.get();
            if let Some(slot) = out.get_mut(idx) {
                *slot = (f(input[i]), crate::harness::WRITTEN);
            }
        }

        /// A generic kernel, instantiated for several element types.
        #[kernel]
        pub fn map_generic<T: crate::special::Step>(input: &[T], mut out: DisjointSlice<(T, u32)>) {
            let idx = thread::index_1d();
            let i = idx.get();
            if let Some(slot) = out.get_mut(idx) {
                *slot = (input[i].step(), crate::harness::WRITTEN);
            }
        }

        /// A by-value struct parameter (one byval blob with the host layout, padding included).
        #[kernel]
        pub fn affine(p: crate::special::Affine, input: &[i32], mut out: DisjointSlice<(i64, u32)>) {
            let idx = thread::index_1d();
            let i = idx.get();
            if let Some(slot) = out.get_mut(idx) {
                *slot = (p.apply(input[i]), crate::harness::WRITTEN);
            }
        }
    }
}

/// The hand-written kernels: closures, generic instances, a by-value struct.
mod special {
    use crate::harness::{Data, Env, Outcome};
    use crate::kernels::Module;

    /// What `map_generic` does to each element.
    pub trait Step: Data {
        fn step(self) -> Self;
    }

    impl Step for u32 {
        fn step(self) -> u32 {
            self.rotate_left(3) ^ 0x5555_5555
        }
    }

    impl Step for i64 {
        fn step(self) -> i64 {
            self.wrapping_mul(-3).wrapping_add(self >> 7)
        }
    }

    impl Step for f32 {
        fn step(self) -> f32 {
            (self + 1.0).sqrt() * 0.5
        }
    }

    impl Step for (u8, i16) {
        fn step(self) -> (u8, i16) {
            (self.0.wrapping_add(1), self.1.rotate_left(2))
        }
    }

    /// Passed by value: mixed field sizes, so the byval blob has padding.
    #[derive(Clone, Copy, Debug)]
    pub struct Affine {
        pub scale: i16,
        pub offset: i64,
        pub flip: bool,
        pub table: [u8; 3],
    }

    impl Affine {
        pub fn apply(&self, x: i32) -> i64 {
            let v = (x as i64).wrapping_mul(self.scale as i64).wrapping_add(self.offset)
                + self.table[(x as u32 % 3) as usize] as i64;
            if self.flip { -v } else { v }
        }
    }

    fn closure_u64_capture(env: &Env<'_, Module>) -> Outcome {
        let (k, mask) = (0x9e37_79b9_7f4a_7c15u64, 0xffu8);
        let f = move |x: u32| ((x as u64).wrapping_mul(k) >> 32) as u32 & !(mask as u32);
        env.check::<u32, u32>(
            "special::closure_u64_capture",
            &map_closure_entry::<_>(f),
            0,
            &f,
            &move |m, s, c, i, o| m.map_closure(s, c, f, i, o),
        )
    }

    fn closure_table_capture(env: &Env<'_, Module>) -> Outcome {
        let table = [3u32, 1, 4, 1, 5, 9, 2, 6];
        let scale = 2.5f32;
        let f = move |x: u32| table[(x % 8) as usize].wrapping_add(((x >> 8) as f32 * scale) as u32);
        env.check::<u32, u32>(
            "special::closure_table_capture",
            &map_closure_entry::<_>(f),
            0,
            &f,
            &move |m, s, c, i, o| m.map_closure(s, c, f, i, o),
        )
    }

    /// The PTX entry of `map_closure::<F>` (found by its key, contracts §5), for the manifest check.
    fn map_closure_entry<F: Fn(u32) -> u32 + Copy>(_: F) -> String {
        entry_of(cuda_core::oxide_contract::naming::kernel_key(&super::kernels::map_closure::<F>))
    }

    /// The entry the embedded manifest gives the kernel instance with `key`.
    fn entry_of(key: u64) -> String {
        crate::embedded_manifest()
            .and_then(|m| m.kernel_by_key(key).map(|k| k.entry.clone()))
            .unwrap_or_else(|| format!("<no kernel with key {key:016x}>"))
    }

    fn generic<T: Step>(env: &Env<'_, Module>, name: &'static str) -> Outcome {
        let entry = entry_of(cuda_core::oxide_contract::naming::kernel_key(&super::kernels::map_generic::<T>));
        env.check::<T, T>(name, &entry, 0, &|x: T| x.step(), &|m, s, c, i, o| m.map_generic::<T>(s, c, i, o))
    }

    fn byval_struct(env: &Env<'_, Module>) -> Outcome {
        let p = Affine { scale: -7, offset: 1 << 40, flip: true, table: [9, 8, 7] };
        env.check::<i32, i64>("special::byval_struct", "affine", 0, &move |x| p.apply(x), &move |m, s, c, i, o| {
            m.affine(s, c, p, i, o)
        })
    }

    pub fn run(env: &Env<'_, Module>) -> Vec<Outcome> {
        vec![
            closure_u64_capture(env),
            closure_table_capture(env),
            generic::<u32>(env, "special::map_generic::<u32>"),
            generic::<i64>(env, "special::map_generic::<i64>"),
            generic::<f32>(env, "special::map_generic::<f32>"),
            generic::<(u8, i16)>(env, "special::map_generic::<(u8, i16)>"),
            byval_struct(env),
        ]
    }
}

use cases::data::{Particle, Point};

/// The manifest of the device code embedded in this binary (none in a plain `cargo build`).
fn embedded_manifest() -> Option<cuda_core::oxide_contract::manifest::Manifest> {
    let manifests = cuda_core::embedded_manifests().ok()?;
    manifests.into_iter().find(|m| m.crate_name == "gpu_corpus").cloned()
}

fn main() {
    let cpu_only =
        std::env::args().any(|a| a == "--cpu-only") || std::env::var_os("CORPUS_CPU_ONLY").is_some_and(|v| v != "0");
    let seed = std::env::var("CORPUS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    });
    let manifest = embedded_manifest();
    let (mode, module) = if cpu_only {
        (Mode::CpuOnly, None)
    } else {
        match setup() {
            Ok((mode, module)) => (mode, Some(module)),
            Err(e) => {
                eprintln!("FAIL corpus: {e}");
                eprintln!("(run with --cpu-only to check the CPU side without a GPU)");
                std::process::exit(2);
            }
        }
    };
    let device = match &mode {
        Mode::CpuOnly => "cpu-only (no GPU: CPU reference, launch configs and manifest)".to_string(),
        Mode::Gpu { ctx, .. } => {
            let (major, minor) = ctx.capability();
            format!("{} (sm_{major}{minor})", ctx.name())
        }
    };
    println!("corpus: {} inputs per case, seed {seed} (CORPUS_SEED={seed} repeats it), {device}", harness::N);
    if manifest.is_none() {
        println!("note: no embedded device code (not built with `cargo oxide build`): manifest checks skipped");
    }
    let env = Env { mode: &mode, module: module.as_ref(), seed, manifest: manifest.as_ref() };
    let mut outcomes = run_cases(&env);
    outcomes.extend(special::run(&env));

    let width = outcomes.iter().map(|o| o.name.len()).max().unwrap_or(0);
    for o in &outcomes {
        let status = match (&mode, o.passed) {
            (_, false) => "FAIL",
            (Mode::CpuOnly, true) => "CPU-OK",
            (Mode::Gpu { .. }, true) => "PASS",
        };
        let ulp = match mode {
            Mode::CpuOnly => format!("ulp bound {}", o.bound),
            Mode::Gpu { .. } => format!("max ulp {} (bound {})", o.max_ulp, o.bound),
        };
        let detail =
            if o.detail.is_empty() || o.detail == "cpu-only" { String::new() } else { format!("  {}", o.detail) };
        println!("{:<width$}  {status:<6}  {ulp}{detail}", o.name);
    }
    let failed = outcomes.iter().filter(|o| !o.passed).count();
    println!("{} passed, {failed} failed", outcomes.len() - failed);
    if failed > 0 {
        std::process::exit(1);
    }
}

fn setup() -> Result<(Mode, kernels::Module), String> {
    let ctx = CudaContext::new(0).map_err(|e| format!("CudaContext::new(0): {e}"))?;
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).map_err(|e| format!("kernels::load: {e}"))?;
    // One round trip before the cases, so a broken context shows up here.
    let probe = DeviceBuffer::from_host(&stream, &[1u32, 2, 3]).map_err(|e| format!("copy to the device: {e}"))?;
    probe.to_host_vec(&stream).map_err(|e| format!("copy to the host: {e}"))?;
    Ok((Mode::Gpu { ctx, stream }, module))
}
