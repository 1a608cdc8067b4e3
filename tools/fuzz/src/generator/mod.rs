//! The program generator: a seed and an index make one random, well-defined, terminating Rust
//! module whose `pub fn run(seed: u64, input: &[u64]) -> u64` folds everything it computes into a
//! checksum. Nothing it writes can overflow, index out of bounds, divide by zero or loop forever,
//! in debug (overflow checks on) or release; floats are folded with NaNs made canonical and signed
//! zeros of `min`/`max` made positive, where Rust leaves the bits to the platform.
mod blocks;
mod expr;
mod features;
mod items;
mod loops;
mod ptrs;
mod reads;
mod scope;
mod stmt;
mod ty;

pub use features::{ALL as FEATURE_LIST, Features};

pub use ty::{Int, Scalar};

use crate::rng::{Rng, program_seed};
use scope::{Items, Kind, Scopes};

/// The generator's version: which programs `SEED:INDEX` names. Bump it with every change to what
/// the generator writes (the `golden` test below fails until then); ids of another version need
/// the oxide-fuzz of that version (its commit) to be regenerated.
pub const VERSION: u32 = 3;

/// Words of input every program reads (the harness passes exactly this many).
pub const INPUT_LEN: usize = 64;

/// One generated program.
#[derive(Clone, Debug)]
pub struct Program {
    /// `seed:index`
    pub id: String,
    pub source: String,
    /// Statements directly in `run` (what [`generate_prefix`] counts).
    pub statements: usize,
}

/// Program `index` of the run seeded with `seed`.
pub fn generate(seed: u64, index: u64, features: &Features) -> Program {
    generate_prefix(seed, index, features, None)
}

/// Program `index` cut after its first `stop` statements of `run` (each may be a whole loop or
/// block), then folding every variable in scope: the same program up to there, the same random
/// choices. `oxide-fuzz localize` runs all prefixes to find where CPU and GPU first part.
pub fn generate_prefix(seed: u64, index: u64, features: &Features, stop: Option<usize>) -> Program {
    let mut rng = Rng::new(program_seed(seed, index));
    let id = match stop {
        None => format!("{seed}:{index}"),
        Some(k) => format!("{seed}:{index}@{k}"),
    };
    let mut g = Gen::new(&mut rng, features);
    g.stop = stop;
    let items = g.items_section();
    let run = g.run_fn();
    let statements = g.statements;
    let source = format!(
        "//! oxide-fuzz program {id}, generator v{VERSION} (`oxide-fuzz gen {id}`{}): generated, do not edit.\n\
         #![allow(warnings)]\n\n{PRELUDE}\n{items}{run}",
        features.describe_changes()
    );
    Program { id, source, statements }
}

/// Helpers every program starts with: the checksum fold and the platform-independent float bits.
pub const PRELUDE: &str = "\
fn fold(ck: u64, x: u64) -> u64 {
    (ck ^ x).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(23) ^ (x >> 17)
}

fn fold128(ck: u64, x: u128) -> u64 {
    fold(fold(ck, x as u64), (x >> 64) as u64)
}

/// NaN bits differ between CPU and GPU (sign, payload): every NaN folds the same.
fn canon32(x: f32) -> u64 {
    if x.is_nan() { 0x7fc0_0000 } else { x.to_bits() as u64 }
}

fn canon64(x: f64) -> u64 {
    if x.is_nan() { 0x7ff8_0000_0000_0000 } else { x.to_bits() }
}

/// `min`/`max` may return either zero for (-0.0, +0.0): the result is made +0.0.
fn fmin32(a: f32, b: f32) -> f32 {
    let m = a.min(b);
    if m == 0.0 { 0.0 } else { m }
}

fn fmax32(a: f32, b: f32) -> f32 {
    let m = a.max(b);
    if m == 0.0 { 0.0 } else { m }
}

fn fmin64(a: f64, b: f64) -> f64 {
    let m = a.min(b);
    if m == 0.0 { 0.0 } else { m }
}

fn fmax64(a: f64, b: f64) -> f64 {
    let m = a.max(b);
    if m == 0.0 { 0.0 } else { m }
}
";

/// An enclosing loop or labelled block that `break`/`continue` may target.
#[derive(Clone, Debug)]
pub(crate) struct LoopCtx {
    pub label: String,
    /// The type of `break value`, for a `loop` (or labelled block) that yields one.
    pub value: Option<Scalar>,
    /// Labelled blocks take `break 'label` but not `continue`.
    pub is_block: bool,
}

/// The generator's state while it writes one function.
pub(crate) struct Gen<'r> {
    pub rng: &'r mut Rng,
    pub feat: &'r Features,
    pub items: Items,
    pub scopes: Scopes,
    pub out: String,
    pub indent: usize,
    pub loops: Vec<LoopCtx>,
    /// Statements left for the current function.
    pub budget: i32,
    /// Nesting of blocks (if/loop/match bodies).
    pub depth: u32,
    /// Nesting of loops (bounds the work a program does).
    pub loop_depth: u32,
    /// The scalar types this program uses.
    pub pool: Vec<Scalar>,
    /// Whether the current function has the checksum `ck` to fold into.
    pub has_ck: bool,
    /// The current function's return type, for `return` statements (`None` in `run` and methods
    /// without a result).
    pub ret: Option<Scalar>,
    /// Nesting of compound reads and calls inside the expression being written: each may hold
    /// several sub-expressions, so it is bounded to keep expressions small.
    pub nest: u32,
    /// Whether `input: &[u64]` is in scope (in `run`, not in the items before it).
    pub has_input: bool,
    /// Stop `run` after this many statements (a prefix, for `localize`).
    pub stop: Option<usize>,
    /// Statements written directly in `run`.
    pub statements: usize,
    /// Nesting of index expressions (`a[b[c[..]]]` is cut off at two).
    pub index_nest: u32,
}

impl<'r> Gen<'r> {
    fn new(rng: &'r mut Rng, feat: &'r Features) -> Gen<'r> {
        let mut full = ty::scalar_pool(feat.on("i128"), feat.on("floats"));
        // Each program concentrates on a few types, so values flow between operations.
        let mut pool = Vec::new();
        let n = rng.range(3, 6);
        for _ in 0..n {
            let i = rng.below(full.len());
            pool.push(full.swap_remove(i));
        }
        if !pool.iter().any(|s| s.int().is_some()) {
            pool.push(Scalar::Int(Int::U32));
        }
        Gen {
            rng,
            feat,
            items: Items::default(),
            scopes: Scopes::default(),
            out: String::new(),
            indent: 0,
            loops: Vec::new(),
            budget: 0,
            depth: 0,
            loop_depth: 0,
            pool,
            has_ck: false,
            ret: None,
            nest: 0,
            has_input: false,
            index_nest: 0,
            stop: None,
            statements: 0,
        }
    }

    /// Appends one line at the current indentation.
    pub fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Runs `f` with its output captured instead of appended; returns the text.
    pub fn capture(&mut self, f: impl FnOnce(&mut Self)) -> String {
        let saved = std::mem::take(&mut self.out);
        f(self);
        std::mem::replace(&mut self.out, saved)
    }

    /// A scalar type from the program's pool.
    pub fn any_scalar(&mut self) -> Scalar {
        *self.rng.pick(&self.pool)
    }

    /// An integer type from the pool (or any, now and then).
    pub fn any_int(&mut self) -> Int {
        let ints: Vec<Int> = self.pool.iter().filter_map(|s| s.int()).collect();
        if ints.is_empty() || self.rng.chance(15) {
            let all: Vec<Int> = Int::ALL.iter().copied().filter(|i| self.feat.on("i128") || !i.is_128()).collect();
            *self.rng.pick(&all)
        } else {
            *self.rng.pick(&ints)
        }
    }

    /// The statement folding scalar expression `e` of type `t` into `ck`.
    pub fn fold_stmt(&mut self, e: &str, t: Scalar) {
        let s = fold_call("ck", e, t);
        self.line(&format!("ck = {s};"));
    }

    /// `pub fn run`: initial values from the seed and the input, a body, and a fold of every value
    /// still in scope.
    fn run_fn(&mut self) -> String {
        self.capture(|g| {
            g.line("pub fn run(seed: u64, input: &[u64]) -> u64 {");
            g.indent += 1;
            g.scopes.push();
            g.has_ck = true;
            g.has_input = true;
            g.line("let mut ck: u64 = fold(0x2545_f491_4f6c_dd1d, seed);");
            // The harness always passes INPUT_LEN words; as an array, indexing needs no check.
            g.line(&format!("let input: &[u64; {INPUT_LEN}] = input.try_into().unwrap();"));
            let n_init = g.rng.range(3, 5);
            for k in 0..n_init {
                let t = if k < g.pool.len() { g.pool[k] } else { g.any_scalar() };
                let init = g.initial_value(t);
                let name = g.scopes.fresh("v");
                g.line(&format!("let mut {name}: {} = {init};", t.name()));
                g.scopes.declare(&name, Kind::Scalar(t), true);
            }
            g.budget = g.rng.range(4, 10) as i32;
            while g.budget > 0 && g.stop != Some(g.statements) {
                g.stmt();
                g.statements += 1;
            }
            g.fold_scope_vars();
            g.scopes.pop();
            g.line("ck");
            g.indent -= 1;
            g.line("}");
        })
    }

    /// A value of type `t` computed from the thread's seed and the input.
    fn initial_value(&mut self, t: Scalar) -> String {
        let k = self.rng.below(64);
        let r = self.rng.below(64);
        let word = format!("input[{k}]");
        let mixed = format!("({word} ^ seed.rotate_left({r}))");
        match t {
            Scalar::Int(i) if i.is_128() => {
                let k2 = self.rng.below(64);
                format!("((input[{k2}] as u128) << 64 | {mixed} as u128) as {}", i.name())
            }
            Scalar::Int(i) => format!("{mixed} as {}", i.name()),
            Scalar::Bool => format!("{mixed} & {} != 0", 1u64 << self.rng.below(64)),
            Scalar::F32 => match self.rng.below(3) {
                0 => format!("f32::from_bits({mixed} as u32)"),
                1 => format!("({mixed} as i32 as f32) / 65536.0"),
                _ => format!("{mixed} as u16 as f32 * 0.25 - 8192.0"),
            },
            Scalar::F64 => match self.rng.below(3) {
                0 => format!("f64::from_bits({mixed})"),
                1 => format!("({mixed} as i64 as f64) / 4294967296.0"),
                _ => format!("{mixed} as i32 as f64 * 0.125"),
            },
        }
    }
}

/// `fold(ck, <e as u64>)` for a scalar of type `t` (NaNs canonical).
pub fn fold_call(ck: &str, e: &str, t: Scalar) -> String {
    match t {
        Scalar::Int(i) if i.is_128() => format!("fold128({ck}, ({e}) as u128)"),
        Scalar::Int(_) | Scalar::Bool => format!("fold({ck}, ({e}) as u64)"),
        Scalar::F32 => format!("fold({ck}, canon32({e}))"),
        Scalar::F64 => format!("fold({ck}, canon64({e}))"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails when the generated programs change: bump [`VERSION`] and update the hash.
    #[test]
    fn golden() {
        let f = Features::default();
        let text: String = (0..30).map(|i| generate(7, i, &f).source).collect();
        let hash =
            text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3));
        assert_eq!(
            (VERSION, hash),
            (3, 0x5763_415e_0024_41a5),
            "the generator's output changed: bump VERSION and set the new hash {hash:#x}"
        );
    }

    #[test]
    fn generation_is_deterministic() {
        let f = Features::default();
        for i in 0..50 {
            assert_eq!(generate(5, i, &f).source, generate(5, i, &f).source);
        }
        assert_ne!(generate(5, 1, &f).source, generate(5, 2, &f).source);
    }
}
