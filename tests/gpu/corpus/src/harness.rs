//! The differential harness: random inputs, output poisoning, comparison (exact or in ulps), and
//! one report line per case.
use std::fmt::Debug;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use cuda_core::{CudaContext, CudaStream, DeviceBuffer, DeviceCopy, DriverError, LaunchConfig};

/// Inputs per case: 16 full blocks of 256 plus 3 threads of a last, partial block.
pub const N: usize = 4099;

/// Written by every kernel wrapper next to its result: proves the element was written.
pub const WRITTEN: u32 = 0x600D_F00D;

/// A distance that means "not equal" for the exact types.
pub const MISMATCH: u64 = u64::MAX;

/// A 64-bit LCG (Knuth's MMIX constants) with an output mix: reproducible inputs, no dependency.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        corpus_helper::mix64(self.0)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Plain data a case takes or returns: random generation (edge values first), a poison value the
/// output buffer is filled with before the launch, and a distance between a CPU and a GPU value
/// (0 = identical; for floats the ulp distance; `MISMATCH` for unequal exact values). `'static`
/// because generic kernels' type parameters are (their entry names use `TypeId`).
pub trait Data: DeviceCopy + Debug + 'static {
    /// The `i`-th input: small `i` give edge values, the rest random ones.
    fn generate(rng: &mut Lcg, i: usize) -> Self;
    fn poison() -> Self;
    fn distance(&self, gpu: &Self) -> u64;
}

macro_rules! int_data {
    ($($t:ty),*) => {$(
        impl Data for $t {
            fn generate(rng: &mut Lcg, i: usize) -> $t {
                let edges: [$t; 10] = [0, 1, 2, <$t>::MAX, <$t>::MIN, <$t>::MAX - 1, <$t>::MIN.wrapping_add(1),
                    (0 as $t).wrapping_sub(1), (0 as $t).wrapping_sub(2), 7];
                if i < edges.len() {
                    return edges[i];
                }
                let bits = ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128) as $t;
                match rng.below(4) {
                    0 | 1 => bits,
                    // small magnitudes, both signs where the type has them
                    2 => (rng.below(201) as i64 - 100) as $t,
                    // every magnitude
                    _ => bits >> rng.below(<$t>::BITS as u64),
                }
            }
            fn poison() -> $t {
                (0xA5A5_A5A5_A5A5_A5A5_A5A5_A5A5_A5A5_A5A5u128) as $t
            }
            fn distance(&self, gpu: &$t) -> u64 {
                if self == gpu { 0 } else { MISMATCH }
            }
        }
    )*};
}
int_data!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

/// Distance in units in the last place between two floats given as sign-magnitude bits mapped to
/// a monotonic integer line; NaN equals NaN (payloads differ between CPU and GPU).
fn ulps(a_nan: bool, b_nan: bool, a: i128, b: i128) -> u64 {
    match (a_nan, b_nan) {
        (true, true) => 0,
        (false, false) => u64::try_from((a - b).unsigned_abs()).unwrap_or(MISMATCH),
        _ => MISMATCH,
    }
}

macro_rules! float_data {
    ($t:ty, $bits:ty, $poison:expr) => {
        impl Data for $t {
            fn generate(rng: &mut Lcg, i: usize) -> $t {
                let edges: [$t; 14] = [
                    0.0,
                    -0.0,
                    1.0,
                    -1.0,
                    0.5,
                    2.0,
                    <$t>::INFINITY,
                    <$t>::NEG_INFINITY,
                    <$t>::NAN,
                    <$t>::MAX,
                    <$t>::MIN_POSITIVE,
                    <$t>::EPSILON,
                    3.5,
                    -2.5,
                ];
                if i < edges.len() {
                    return edges[i];
                }
                let u = rng.unit_f64();
                match rng.below(8) {
                    0..=2 => (u * 20.0 - 10.0) as $t,
                    3 | 4 => (u * 2000.0 - 1000.0) as $t,
                    5 => (u * 2.0 - 1.0) as $t,
                    // any finite bit pattern: every exponent, subnormals included
                    _ => {
                        let x = <$t>::from_bits(rng.next_u64() as $bits);
                        if x.is_finite() { x } else { (u - 0.5) as $t }
                    }
                }
            }
            fn poison() -> $t {
                <$t>::from_bits($poison)
            }
            fn distance(&self, gpu: &$t) -> u64 {
                if gpu.to_bits() == $poison {
                    return MISMATCH;
                }
                let line = |x: $t| {
                    let b = x.to_bits() as i128;
                    let mag = b & ((1i128 << (<$bits>::BITS - 1)) - 1);
                    if x.is_sign_negative() { -mag } else { mag }
                };
                ulps(self.is_nan(), gpu.is_nan(), line(*self), line(*gpu))
            }
        }
    };
}
float_data!(f32, u32, 0x7FA5_A5A5);
float_data!(f64, u64, 0x7FF4_A5A5_A5A5_A5A5);

impl Data for bool {
    fn generate(rng: &mut Lcg, i: usize) -> bool {
        if i < 2 { i == 1 } else { rng.below(2) == 1 }
    }
    fn poison() -> bool {
        true
    }
    fn distance(&self, gpu: &bool) -> u64 {
        if self == gpu { 0 } else { MISMATCH }
    }
}

impl Data for char {
    fn generate(rng: &mut Lcg, i: usize) -> char {
        let edges = ['\0', 'a', 'Z', '9', ' ', 'é', 'ß', '\u{10FFFF}', '\u{D7FF}', '\u{E000}', '😀', 'İ'];
        if i < edges.len() {
            return edges[i];
        }
        loop {
            let c = match rng.below(3) {
                0 => rng.below(128) as u32,
                1 => rng.below(0x800) as u32,
                _ => rng.below(0x11_0000) as u32,
            };
            if let Some(c) = char::from_u32(c) {
                return c;
            }
        }
    }
    fn poison() -> char {
        '\u{A5A5}'
    }
    fn distance(&self, gpu: &char) -> u64 {
        if self == gpu { 0 } else { MISMATCH }
    }
}

/// The index a component of a composite input is generated with: the composite's own index for
/// the first 16 (edge values of every component together), then random (edges now and then).
fn sub_index(rng: &mut Lcg, i: usize) -> usize {
    if i < 16 {
        i
    } else if rng.below(8) == 0 {
        rng.below(16) as usize
    } else {
        16 + rng.below(1 << 20) as usize
    }
}

macro_rules! tuple_data {
    ($($name:ident $idx:tt),+) => {
        impl<$($name: Data),+> Data for ($($name,)+) {
            fn generate(rng: &mut Lcg, i: usize) -> Self {
                // Edge values of every component together first, then random mixes.
                ($({ let j = sub_index(rng, i); $name::generate(rng, j) },)+)
            }
            fn poison() -> Self {
                ($($name::poison(),)+)
            }
            fn distance(&self, gpu: &Self) -> u64 {
                0 $(.max(self.$idx.distance(&gpu.$idx)))+
            }
        }
    };
}
tuple_data!(A 0);
tuple_data!(A 0, B 1);
tuple_data!(A 0, B 1, C 2);
tuple_data!(A 0, B 1, C 2, D 3);
tuple_data!(A 0, B 1, C 2, D 3, E 4);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

impl<T: Data, const K: usize> Data for [T; K] {
    fn generate(rng: &mut Lcg, i: usize) -> Self {
        std::array::from_fn(|j| {
            let k = if i < 16 { (i + j) % 16 } else { sub_index(rng, i) };
            T::generate(rng, k)
        })
    }
    fn poison() -> Self {
        std::array::from_fn(|_| T::poison())
    }
    fn distance(&self, gpu: &Self) -> u64 {
        self.iter().zip(gpu).map(|(a, b)| a.distance(b)).max().unwrap_or(0)
    }
}

/// `Data` for a struct of `Data` fields: `data_struct!(Point { x, y });`
#[macro_export]
macro_rules! data_struct {
    ($t:ident { $($field:ident),+ $(,)? }) => {
        // SAFETY: every field is `DeviceCopy`; comparisons go field by field, so padding is never read.
        unsafe impl cuda_core::DeviceCopy for $t {}
        impl $crate::harness::Data for $t {
            fn generate(rng: &mut $crate::harness::Lcg, i: usize) -> $t {
                $t { $($field: $crate::harness::Data::generate(rng, i),)+ }
            }
            fn poison() -> $t {
                $t { $($field: $crate::harness::Data::poison(),)+ }
            }
            fn distance(&self, gpu: &$t) -> u64 {
                0 $(.max($crate::harness::Data::distance(&self.$field, &gpu.$field)))+
            }
        }
    };
}

/// What a run does with the GPU.
pub enum Mode {
    /// CPU reference only, plus the manifest and launch-config checks (CI, no GPU).
    CpuOnly,
    Gpu {
        ctx: Arc<CudaContext>,
        stream: Arc<CudaStream>,
    },
}

/// The outcome of one case.
pub struct Outcome {
    pub name: &'static str,
    pub passed: bool,
    /// Largest distance seen (ulps for floats; 0 for exact types that matched).
    pub max_ulp: u64,
    pub bound: u64,
    pub detail: String,
}

/// Everything a case check needs.
pub struct Env<'m, M> {
    pub mode: &'m Mode,
    pub module: Option<&'m M>,
    pub seed: u64,
    /// Entries of the embedded manifest, when the binary was built by cargo oxide.
    pub manifest: Option<&'m cuda_core::oxide_contract::manifest::Manifest>,
}

/// The launch of one kernel wrapper: module, stream, config, input, output.
pub type Launch<'a, M, In, Out> = &'a dyn Fn(
    &M,
    &CudaStream,
    LaunchConfig,
    &DeviceBuffer<In>,
    &mut DeviceBuffer<(Out, u32)>,
) -> Result<(), DriverError>;

impl<M> Env<'_, M> {
    /// Runs `cpu` over N random inputs and, unless CPU-only, the kernel `entry` over the same
    /// inputs; compares the results element by element within `bound` ulps (0 = exact).
    pub fn check<In: Data, Out: Data>(
        &self,
        name: &'static str,
        entry: &str,
        bound: u64,
        cpu: &dyn Fn(In) -> Out,
        launch: Launch<'_, M, In, Out>,
    ) -> Outcome {
        let outcome = |passed, max_ulp, detail: String| Outcome { name, passed, max_ulp, bound, detail };
        let case_seed =
            self.seed ^ corpus_helper::mix64(name.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64)));
        let mut rng = Lcg(case_seed);
        let input: Vec<In> = (0..N).map(|i| In::generate(&mut rng, i)).collect();
        let expected = match catch_unwind(AssertUnwindSafe(|| input.iter().map(|&x| cpu(x)).collect::<Vec<Out>>())) {
            Ok(e) => e,
            Err(_) => {
                return outcome(false, 0, "the CPU reference panicked (a case must not panic on any input)".into());
            }
        };
        if let Some(problem) = self.check_manifest::<In, Out>(entry) {
            return outcome(false, 0, problem);
        }
        let config = LaunchConfig::for_num_elems(N as u32);
        if let Err(e) = config.validate() {
            return outcome(false, 0, format!("launch config {config:?}: {e}"));
        }
        if (config.grid_dim.0 as usize) * (config.block_dim.0 as usize) < N {
            return outcome(false, 0, format!("launch config {config:?} covers fewer than {N} threads"));
        }
        let (Mode::Gpu { stream, .. }, Some(module)) = (self.mode, self.module) else {
            return outcome(true, 0, "cpu-only".into());
        };
        let gpu = match run_on_gpu(stream, module, config, &input, launch) {
            Ok(g) => g,
            Err(e) => return outcome(false, 0, e),
        };
        let mut max_ulp = 0;
        let mut wrong = Vec::new();
        for (i, ((exp, (got, mark)), x)) in expected.iter().zip(&gpu).zip(&input).enumerate() {
            let d = if *mark == WRITTEN { exp.distance(got) } else { MISMATCH };
            if d <= bound {
                max_ulp = max_ulp.max(d);
            } else {
                wrong.push((i, d, x, exp, got, *mark));
            }
        }
        match wrong.first() {
            None => outcome(true, max_ulp, String::new()),
            Some((i, d, x, exp, got, mark)) => {
                let what = if *mark != WRITTEN {
                    "not written by the kernel".to_string()
                } else if *d == MISMATCH {
                    "differs".to_string()
                } else {
                    format!("off by {d} ulp")
                };
                outcome(
                    false,
                    max_ulp.max(if *d == MISMATCH { 0 } else { *d }),
                    format!(
                        "{} of {N} elements wrong; first: element {i} {what}: input {x:?}, cpu {exp:?}, gpu {got:?}",
                        wrong.len()
                    ),
                )
            }
        }
    }

    /// The embedded manifest must list `entry` as (`&[In]`, `DisjointSlice<(Out, u32)>`).
    fn check_manifest<In, Out>(&self, entry: &str) -> Option<String> {
        use cuda_core::oxide_contract::manifest::ParamKind;
        let manifest = self.manifest?;
        let Some(k) = manifest.kernel(entry) else {
            return Some(format!("the embedded manifest has no kernel `{entry}`"));
        };
        let params: Vec<(ParamKind, u64)> =
            k.params.iter().filter(|p| p.kind != ParamKind::Zst).map(|p| (p.kind, p.size)).collect();
        let (input, output) = (size_of::<In>() as u64, size_of::<(Out, u32)>() as u64);
        let tail = &params[params.len().saturating_sub(2)..];
        if tail != [(ParamKind::Slice, input), (ParamKind::DisjointSlice, output)] {
            return Some(format!(
                "manifest parameters of `{entry}` are {params:?}; expected (.., slice of {input} B, disjoint_slice of {output} B)"
            ));
        }
        None
    }
}

fn run_on_gpu<M, In: Data, Out: Data>(
    stream: &CudaStream,
    module: &M,
    config: LaunchConfig,
    input: &[In],
    launch: Launch<'_, M, In, Out>,
) -> Result<Vec<(Out, u32)>, String> {
    let input_dev = DeviceBuffer::from_host(stream, input).map_err(|e| format!("copy the input to the device: {e}"))?;
    let poison = vec![(Out::poison(), 0u32); input.len()];
    let mut out_dev = DeviceBuffer::from_host(stream, &poison).map_err(|e| format!("poison the output: {e}"))?;
    stream.synchronize().map_err(|e| format!("synchronize before the launch: {e}"))?;
    launch(module, stream, config, &input_dev, &mut out_dev).map_err(|e| format!("launch: {e}"))?;
    stream.synchronize().map_err(|e| format!("synchronize after the launch (the kernel faulted or trapped): {e}"))?;
    let out = out_dev.to_host_vec(stream).map_err(|e| format!("copy the output to the host: {e}"))?;
    if out.len() != input.len() {
        return Err(format!("got {} elements back, expected {}", out.len(), input.len()));
    }
    Ok(out)
}
