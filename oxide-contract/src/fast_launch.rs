//! Unchecked twins of versioned kernels, and the launch condition that picks one.
//!
//! The device compiler gives a kernel whose bounds checks all pass under a condition `U` on
//! uniform values (kernel parameters, block and grid extents) a fast copy chosen at its entry
//! (`codegen-driver/src/pipeline/uniform_bounds/`). Testing `U` in the kernel costs each warp
//! ~20 instructions before its first load, 2-4 % of a kernel with one point per thread (bench
//! notes, perf6). So the compiler also emits the fast copy alone as a second entry (named by
//! [`twin_entry`]), and records `U` here as a [`Condition`]: the host evaluates it with
//! the launch's arguments and extents, and launches the twin when it holds. The kernel itself
//! stays the entry every other launch path uses (by name, from CUDA C++, cooperative launches),
//! with its checked body (the in-kernel test and fast copy cost a third of its code and served
//! only those launches: `codegen-driver/src/pipeline/fast_twin.rs`).
//!
//! A [`Condition`] is a straight-line program of steps with LLVM's semantics on integers
//! (wrapping arithmetic modulo `2^bits`). The compiler builds `U` as this program and prints the
//! same steps into the kernel's entry block, so the host's answer is exactly the kernel's: one
//! definition, read by both, and no IR text parsed on the way.

use serde::{Deserialize, Serialize};

/// The environment variable that, set to `0`, makes the host launch the versioned kernels
/// themselves (their checked body), never a twin: to compare the two, or to run the kernel that
/// a launch by name runs.
pub const TWINS_ENV: &str = "CUDA_OXIDE_TWINS";

/// What a twin's PTX entry name adds to its kernel's, before the condition's hash.
pub const TWIN_MARK: &str = "__oxide_fast_";

/// The twin's entry name for a kernel's entry and launch condition:
/// `<entry>__oxide_fast_<16 hex digits of the condition's SHA-256>`. The name binds the twin to
/// its condition: a manifest from another build whose condition differs names an entry that
/// module does not have, and the host launches the kernel itself (its checked body).
pub fn twin_entry(entry: &str, condition: &Condition) -> String {
    let steps = serde_json::to_string(&condition.steps).unwrap_or_default();
    format!("{entry}{TWIN_MARK}{}", &crate::sha256_hex(steps.as_bytes())[..16])
}

/// A kernel's unchecked twin and when it may run instead of the kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FastLaunch {
    /// The twin's PTX entry name ([`twin_entry`]).
    pub entry: String,
    pub condition: Condition,
}

/// A manifest's twin, or none where it has a form this version does not read (recorded by
/// another version of the compiler): the kernel then runs as launched by name, never a twin
/// whose condition could be misread.
pub fn read_lenient<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<FastLaunch>, D::Error> {
    let value = serde_json::Value::deserialize(d)?;
    Ok(serde_json::from_value(value).ok())
}

/// A straight-line program over the launch's uniform values; its last step is the answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Condition {
    pub steps: Vec<Step>,
}

/// One value of the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operand {
    /// An integer constant (already reduced to the step's width).
    Const(u64),
    /// The kernel's parameter at this PTX parameter index, read as an integer of `bits`.
    Param { index: u32, bits: u32 },
    /// An earlier step's result.
    Step(u32),
}

/// A launch extent, as the special register that reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Extent {
    BlockX,
    BlockY,
    BlockZ,
    GridX,
    GridY,
    GridZ,
}

/// One instruction: its result has `bits` bits (1 for a compare).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Step {
    Binary { op: BinOp, bits: u32, a: Operand, b: Operand },
    Compare { pred: Pred, bits: u32, a: Operand, b: Operand },
    Select { c: Operand, bits: u32, a: Operand, b: Operand },
    Cast { op: CastOp, from: u32, to: u32, a: Operand },
    Extent(Extent),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    UDiv,
    URem,
    Shl,
    LShr,
    AShr,
    And,
    Or,
    Xor,
    UMin,
    UMax,
    SMin,
    SMax,
    UAddSat,
    /// `a * b`, or the largest value where the product does not fit (`llvm.umul.with.overflow`
    /// and a `select`).
    UMulSat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Pred {
    Eq,
    Ne,
    Ult,
    Ule,
    Ugt,
    Uge,
    Slt,
    Sle,
    Sgt,
    Sge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CastOp {
    ZExt,
    SExt,
    Trunc,
}

/// What a launch gives the condition: its extents and a reader of its integer parameters.
pub struct LaunchValues<'a> {
    pub block: (u32, u32, u32),
    pub grid: (u32, u32, u32),
    /// The parameter at a PTX index as an unsigned integer of `bits` (8, 16, 32 or 64), or
    /// `None` when the launch does not have it.
    pub param: &'a dyn Fn(u32, u32) -> Option<u64>,
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
}

fn signed(v: u64, bits: u32) -> i64 {
    let shift = 64 - bits.clamp(1, 64);
    ((v << shift) as i64) >> shift
}

impl Condition {
    /// Whether the condition holds for a launch; `None` when a parameter it reads is missing.
    pub fn holds(&self, launch: &LaunchValues<'_>) -> Option<bool> {
        let mut values: Vec<u64> = Vec::with_capacity(self.steps.len());
        let get = |values: &Vec<u64>, o: Operand| -> Option<u64> {
            match o {
                Operand::Const(c) => Some(c),
                Operand::Param { index, bits } => (launch.param)(index, bits).map(|v| v & mask(bits)),
                Operand::Step(i) => values.get(i as usize).copied(),
            }
        };
        for step in &self.steps {
            let v = match *step {
                Step::Binary { op, bits, a, b } => {
                    let (x, y, m) = (get(&values, a)?, get(&values, b)?, mask(bits));
                    let (sx, sy) = (signed(x, bits), signed(y, bits));
                    match op {
                        BinOp::Add => x.wrapping_add(y) & m,
                        BinOp::Sub => x.wrapping_sub(y) & m,
                        BinOp::Mul => x.wrapping_mul(y) & m,
                        BinOp::UDiv => x.checked_div(y)?,
                        BinOp::URem => x.checked_rem(y)?,
                        BinOp::Shl => (y < u64::from(bits)).then(|| (x << y) & m)?,
                        BinOp::LShr => (y < u64::from(bits)).then(|| x >> y)?,
                        BinOp::AShr => (y < u64::from(bits)).then(|| ((sx >> y) as u64) & m)?,
                        BinOp::And => x & y,
                        BinOp::Or => x | y,
                        BinOp::Xor => x ^ y,
                        BinOp::UMin => x.min(y),
                        BinOp::UMax => x.max(y),
                        BinOp::SMin => (sx.min(sy) as u64) & m,
                        BinOp::SMax => (sx.max(sy) as u64) & m,
                        BinOp::UAddSat => x.checked_add(y).filter(|s| *s <= m).unwrap_or(m),
                        BinOp::UMulSat => x.checked_mul(y).filter(|p| *p <= m).unwrap_or(m),
                    }
                }
                Step::Compare { pred, bits, a, b } => {
                    let (x, y) = (get(&values, a)?, get(&values, b)?);
                    let (sx, sy) = (signed(x, bits), signed(y, bits));
                    u64::from(match pred {
                        Pred::Eq => x == y,
                        Pred::Ne => x != y,
                        Pred::Ult => x < y,
                        Pred::Ule => x <= y,
                        Pred::Ugt => x > y,
                        Pred::Uge => x >= y,
                        Pred::Slt => sx < sy,
                        Pred::Sle => sx <= sy,
                        Pred::Sgt => sx > sy,
                        Pred::Sge => sx >= sy,
                    })
                }
                Step::Select { c, a, b, .. } => {
                    if get(&values, c)? & 1 == 1 {
                        get(&values, a)?
                    } else {
                        get(&values, b)?
                    }
                }
                Step::Cast { op, from, to, a } => {
                    let x = get(&values, a)?;
                    match op {
                        CastOp::ZExt => x,
                        CastOp::SExt => (signed(x, from) as u64) & mask(to),
                        CastOp::Trunc => x & mask(to),
                    }
                }
                Step::Extent(e) => u64::from(match e {
                    Extent::BlockX => launch.block.0,
                    Extent::BlockY => launch.block.1,
                    Extent::BlockZ => launch.block.2,
                    Extent::GridX => launch.grid.0,
                    Extent::GridY => launch.grid.1,
                    Extent::GridZ => launch.grid.2,
                }),
            };
            values.push(v);
        }
        values.last().map(|v| v & 1 == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P1: Operand = Operand::Param { index: 1, bits: 64 };
    const P2: Operand = Operand::Param { index: 2, bits: 32 };
    const P3: Operand = Operand::Param { index: 3, bits: 64 };

    fn bin(op: BinOp, bits: u32, a: Operand, b: Operand) -> Step {
        Step::Binary { op, bits, a, b }
    }

    fn holds(steps: &[Step], params: &[u64], block: (u32, u32, u32), grid: (u32, u32, u32)) -> bool {
        let condition = Condition { steps: steps.to_vec() };
        let param = |i: u32, _bits: u32| params.get(i as usize).copied();
        condition.holds(&LaunchValues { block, grid, param: &param }).expect("evaluates")
    }

    #[test]
    fn vecadd_lengths_and_a_flat_grid() {
        // ntid.y | ntid.z | nctaid.y == 1 and len(c) <= len(a).
        let s = |i: u32| Operand::Step(i);
        let steps = [
            Step::Extent(Extent::BlockY),
            Step::Extent(Extent::BlockZ),
            bin(BinOp::Or, 32, s(0), s(1)),
            Step::Extent(Extent::GridY),
            bin(BinOp::Or, 32, s(2), s(3)),
            Step::Compare { pred: Pred::Eq, bits: 32, a: s(4), b: Operand::Const(1) },
            Step::Compare { pred: Pred::Ule, bits: 64, a: P3, b: P1 },
            bin(BinOp::And, 1, s(5), s(6)),
        ];
        let p = [0, 100, 0, 100];
        assert!(holds(&steps, &p, (256, 1, 1), (4, 1, 1)));
        assert!(!holds(&steps, &p, (256, 2, 1), (4, 1, 1)));
        assert!(!holds(&steps, &p, (256, 1, 1), (4, 3, 1)));
        assert!(!holds(&steps, &[0, 99, 0, 100], (256, 1, 1), (4, 1, 1)));
    }

    #[test]
    fn arithmetic_wraps_at_its_width_and_saturates_where_asked() {
        let s = |i: u32| Operand::Step(i);
        let steps = [
            bin(BinOp::Add, 32, P2, Operand::Const(u64::from(u32::MAX))),
            Step::Cast { op: CastOp::ZExt, from: 32, to: 64, a: s(0) },
            bin(BinOp::Add, 64, s(1), Operand::Const(u64::MAX)),
            Step::Compare { pred: Pred::Eq, bits: 64, a: s(2), b: Operand::Const(4294967294) },
            bin(BinOp::UMulSat, 64, P1, P3),
            bin(BinOp::UAddSat, 64, s(4), Operand::Const(1)),
            Step::Compare { pred: Pred::Eq, bits: 64, a: s(5), b: Operand::Const(u64::MAX) },
            bin(BinOp::And, 1, s(3), s(6)),
        ];
        // p2 = 0: `0 - 1` wraps to 2^32 - 1 in i32; the product overflows and saturates.
        assert!(holds(&steps, &[0, u64::MAX / 2, 0, 3], (1, 1, 1), (1, 1, 1)));
        assert!(!holds(&steps, &[0, 2, 0, 3], (1, 1, 1), (1, 1, 1)));
        assert!(!holds(&steps, &[0, u64::MAX / 2, 1, 3], (1, 1, 1), (1, 1, 1)));
    }

    #[test]
    fn signed_and_min_max_forms() {
        let s = |i: u32| Operand::Step(i);
        let steps = [
            Step::Cast { op: CastOp::SExt, from: 32, to: 64, a: P2 },
            Step::Compare { pred: Pred::Slt, bits: 64, a: s(0), b: Operand::Const(0) },
            bin(BinOp::SMax, 64, s(0), Operand::Const(-5i64 as u64)),
            Step::Compare { pred: Pred::Eq, bits: 64, a: s(2), b: Operand::Const(-5i64 as u64) },
            bin(BinOp::UDiv, 64, P1, Operand::Const(3)),
            Step::Compare { pred: Pred::Ugt, bits: 64, a: s(4), b: Operand::Const(2) },
            bin(BinOp::AShr, 64, s(0), Operand::Const(1)),
            Step::Compare { pred: Pred::Slt, bits: 64, a: s(6), b: Operand::Const(-3i64 as u64) },
            bin(BinOp::And, 1, s(1), s(3)),
            bin(BinOp::And, 1, s(8), s(5)),
            bin(BinOp::And, 1, s(9), s(7)),
        ];
        assert!(holds(&steps, &[0, 9, (-7i32) as u32 as u64, 0], (1, 1, 1), (1, 1, 1)));
        assert!(!holds(&steps, &[0, 9, (-2i32) as u32 as u64, 0], (1, 1, 1), (1, 1, 1)));
        assert!(!holds(&steps, &[0, 8, (-7i32) as u32 as u64, 0], (1, 1, 1), (1, 1, 1)));
    }

    #[test]
    fn division_by_zero_and_missing_parameters_answer_nothing() {
        let condition = Condition { steps: vec![bin(BinOp::UDiv, 64, P1, P3)] };
        let param = |i: u32, _: u32| [0u64, 5, 0, 0].get(i as usize).copied();
        assert_eq!(condition.holds(&LaunchValues { block: (1, 1, 1), grid: (1, 1, 1), param: &param }), None);
        let none = |_: u32, _: u32| None;
        assert_eq!(condition.holds(&LaunchValues { block: (1, 1, 1), grid: (1, 1, 1), param: &none }), None);
    }

    #[test]
    fn a_twin_in_an_unknown_form_is_no_twin() {
        let kernel = |fast: &str| {
            let json = format!(r#"{{"name":"k","key":1,"entry":"k","params":[],"fast":{fast}}}"#);
            serde_json::from_str::<crate::manifest::KernelInfo>(&json)
        };
        let old = r#"{"entry":"k__oxide_fast_0","condition":{"steps":[{"MulOverflows":{"bits":64,"a":{"Const":1},"b":{"Const":2}}}]}}"#;
        assert_eq!(kernel(old).expect("the kernel still reads").fast, None);
        let now = r#"{"entry":"k__oxide_fast_0","condition":{"steps":[{"Extent":"BlockX"}]}}"#;
        assert!(kernel(now).expect("reads").fast.is_some());
    }

    #[test]
    fn a_twin_is_named_by_its_condition() {
        let c = |k: u64| Condition {
            steps: vec![Step::Compare { pred: Pred::Ult, bits: 64, a: P1, b: Operand::Const(k) }],
        };
        let (c1, c2) = (c(5), c(6));
        let name = twin_entry("vecadd", &c1);
        assert!(name.starts_with("vecadd__oxide_fast_") && name.len() == "vecadd__oxide_fast_".len() + 16, "{name}");
        assert_eq!(name, twin_entry("vecadd", &c1.clone()));
        assert_ne!(name, twin_entry("vecadd", &c2));
        assert!(crate::naming::is_reserved_entry_name(&name));
    }
}
