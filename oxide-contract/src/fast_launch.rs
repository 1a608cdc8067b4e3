//! Unchecked twins of versioned kernels, and the launch condition that picks one.
//!
//! The device compiler gives a kernel whose bounds checks all pass under a condition `U` on
//! uniform values (kernel parameters, block and grid extents) a fast copy chosen at its entry
//! (`codegen-driver/src/pipeline/uniform_bounds/`). Testing `U` in the kernel costs each warp
//! ~20 instructions before its first load, 2-4 % of a kernel with one point per thread (bench
//! notes, perf6). So the compiler also emits the fast copy alone as a second entry (named by
//! [`twin_entry`]), and records `U` here as a [`Condition`]: the host evaluates it with
//! the launch's arguments and extents, and launches the twin when it holds. The versioned
//! kernel stays the entry every other launch path uses (by name, from CUDA C++), and takes the
//! same decision itself.
//!
//! A [`Condition`] is the entry test's LLVM IR, parsed into steps with LLVM's semantics on
//! integers (wrapping arithmetic modulo `2^bits`). [`Condition::parse`] accepts only the forms
//! the compiler emits there, and refuses anything else (the kernel then gets no twin): the host's
//! answer must be exactly the kernel's.

use serde::{Deserialize, Serialize};

/// The environment variable that, set to `0`, makes the host launch the versioned kernels
/// themselves (their entry test then chooses), never a twin: to compare the two, or to run the
/// kernel that a launch by name runs.
pub const TWINS_ENV: &str = "CUDA_OXIDE_TWINS";

/// What a twin's PTX entry name adds to its kernel's, before the condition's hash.
pub const TWIN_MARK: &str = "__oxide_fast_";

/// The twin's entry name for a kernel's entry and launch condition:
/// `<entry>__oxide_fast_<16 hex digits of the condition's SHA-256>`. The name binds the twin to
/// its condition: a manifest from another build whose condition differs names an entry that
/// module does not have, and the host launches the kernel itself (its own test chooses).
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

/// A straight-line program over the launch's uniform values; its last step is the answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Condition {
    pub steps: Vec<Step>,
}

/// One value of the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Operand {
    /// An integer constant (already reduced to the step's width).
    Const(u64),
    /// The kernel's parameter at this PTX parameter index, read as an integer of `bits`.
    Param { index: u32, bits: u32 },
    /// An earlier step's result.
    Step(u32),
}

/// A launch extent, as the special register that reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Extent {
    BlockX,
    BlockY,
    BlockZ,
    GridX,
    GridY,
    GridZ,
}

/// One instruction: its result has `bits` bits (1 for a compare).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Step {
    Binary {
        op: BinOp,
        bits: u32,
        a: Operand,
        b: Operand,
    },
    Compare {
        pred: Pred,
        bits: u32,
        a: Operand,
        b: Operand,
    },
    Select {
        c: Operand,
        bits: u32,
        a: Operand,
        b: Operand,
    },
    Cast {
        op: CastOp,
        from: u32,
        to: u32,
        a: Operand,
    },
    Extent(Extent),
    /// Whether `a * b` overflows `bits` (`llvm.umul.with.overflow`'s second field; its first is
    /// a `Mul` step).
    MulOverflows {
        bits: u32,
        a: Operand,
        b: Operand,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    UDiv,
    URem,
    Shl,
    LShr,
    And,
    Or,
    Xor,
    UMin,
    UMax,
    SMin,
    SMax,
    UAddSat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Parses the entry test `lines` (`%v = …` each, as `uniform_bounds` emits them, parameters
    /// named in `params` in PTX order with their IR type) whose answer is `answer` (`true`, or a
    /// value defined by the lines). `None` when a line has a form this module does not evaluate.
    pub fn parse(lines: &[&str], params: &[(&str, &str)], answer: &str) -> Option<Condition> {
        let mut parser = Parser { names: Vec::new(), params, steps: Vec::new(), products: Vec::new() };
        for line in lines {
            parser.line(line.trim())?;
        }
        let answer = parser.operand(answer, 1)?;
        // The answer as the last step (`and i1 true, v`), so evaluation returns it.
        parser.steps.push(Step::Binary { op: BinOp::And, bits: 1, a: Operand::Const(1), b: answer });
        Some(Condition { steps: parser.steps })
    }

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
                        BinOp::And => x & y,
                        BinOp::Or => x | y,
                        BinOp::Xor => x ^ y,
                        BinOp::UMin => x.min(y),
                        BinOp::UMax => x.max(y),
                        BinOp::SMin => (sx.min(sy) as u64) & m,
                        BinOp::SMax => (sx.max(sy) as u64) & m,
                        BinOp::UAddSat => x.checked_add(y).filter(|s| *s <= m).unwrap_or(m),
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
                Step::MulOverflows { bits, a, b } => {
                    let (x, y) = (u128::from(get(&values, a)?), u128::from(get(&values, b)?));
                    u64::from(x * y > u128::from(mask(bits)))
                }
            };
            values.push(v);
        }
        values.last().map(|v| v & 1 == 1)
    }
}

struct Parser<'p> {
    /// Each step's value name.
    names: Vec<String>,
    params: &'p [(&'p str, &'p str)],
    steps: Vec<Step>,
    /// `llvm.umul.with.overflow` results by name: width and operands.
    products: Vec<(String, u32, Operand, Operand)>,
}

/// The width of an integer type `iN`.
fn int_bits(ty: &str) -> Option<u32> {
    ty.strip_prefix('i')?.parse::<u32>().ok().filter(|b| (1..=64).contains(b))
}

impl Parser<'_> {
    fn operand(&self, v: &str, bits: u32) -> Option<Operand> {
        let v = v.trim();
        match v {
            "true" => return Some(Operand::Const(1)),
            "false" => return Some(Operand::Const(0)),
            _ => {}
        }
        // Constants are written signed (`-1`) or, past `i64::MAX`, unsigned.
        if let Some(c) = v.parse::<i64>().ok().map(|c| c as u64).or_else(|| v.parse::<u64>().ok()) {
            return Some(Operand::Const(c & mask(bits)));
        }
        if let Some(i) = self.names.iter().rposition(|n| n == v) {
            return Some(Operand::Step(i as u32));
        }
        let index = self.params.iter().position(|(name, _)| *name == v)?;
        let param_bits = int_bits(self.params[index].1)?;
        (param_bits == bits).then_some(Operand::Param { index: index as u32, bits })
    }

    fn push(&mut self, name: &str, step: Step) -> Option<()> {
        self.names.push(name.to_string());
        self.steps.push(step);
        Some(())
    }

    fn line(&mut self, line: &str) -> Option<()> {
        let (name, rhs) = line.split_once(" = ")?;
        let rhs = rhs.trim();
        let (op, rest) = rhs.split_once(' ')?;
        match op {
            "icmp" => {
                let (pred, rest) = rest.split_once(' ')?;
                let (ty, rest) = rest.split_once(' ')?;
                let bits = int_bits(ty)?;
                let (a, b) = rest.split_once(", ")?;
                let pred = match pred {
                    "eq" => Pred::Eq,
                    "ne" => Pred::Ne,
                    "ult" => Pred::Ult,
                    "ule" => Pred::Ule,
                    "ugt" => Pred::Ugt,
                    "uge" => Pred::Uge,
                    "slt" => Pred::Slt,
                    "sle" => Pred::Sle,
                    "sgt" => Pred::Sgt,
                    "sge" => Pred::Sge,
                    _ => return None,
                };
                let (a, b) = (self.operand(a, bits)?, self.operand(b, bits)?);
                self.push(name, Step::Compare { pred, bits, a, b })
            }
            "select" => {
                let parts: Vec<&str> = rest.split(", ").collect();
                let [c, a, b] = parts[..] else { return None };
                let c = self.operand(c.strip_prefix("i1 ")?, 1)?;
                let (ty, a) = a.split_once(' ')?;
                let bits = int_bits(ty)?;
                let b = b.strip_prefix(ty)?.strip_prefix(' ')?;
                let (a, b) = (self.operand(a, bits)?, self.operand(b, bits)?);
                self.push(name, Step::Select { c, bits, a, b })
            }
            "zext" | "sext" | "trunc" => {
                let (from_ty, rest) = rest.split_once(' ')?;
                let (a, to_ty) = rest.split_once(" to ")?;
                let (from, to) = (int_bits(from_ty)?, int_bits(to_ty)?);
                let a = self.operand(a, from)?;
                let op = match op {
                    "zext" if to > from => CastOp::ZExt,
                    "sext" if to > from => CastOp::SExt,
                    "trunc" if to < from => CastOp::Trunc,
                    _ => return None,
                };
                self.push(name, Step::Cast { op, from, to, a })
            }
            "call" => self.call(name, rest),
            "extractvalue" => {
                let (m, index) = rest.strip_prefix("{ i64, i1 } ")?.split_once(", ")?;
                let &(_, bits, a, b) = self.products.iter().find(|(n, ..)| n == m)?;
                match index {
                    "0" => self.push(name, Step::Binary { op: BinOp::Mul, bits, a, b }),
                    "1" => self.push(name, Step::MulOverflows { bits, a, b }),
                    _ => None,
                }
            }
            _ => {
                // `op ty a, b` without flags (the entry test drops them).
                let op = match op {
                    "add" => BinOp::Add,
                    "sub" => BinOp::Sub,
                    "mul" => BinOp::Mul,
                    "udiv" => BinOp::UDiv,
                    "urem" => BinOp::URem,
                    "shl" => BinOp::Shl,
                    "lshr" => BinOp::LShr,
                    "and" => BinOp::And,
                    "or" => BinOp::Or,
                    "xor" => BinOp::Xor,
                    _ => return None,
                };
                let (ty, rest) = rest.split_once(' ')?;
                let bits = int_bits(ty)?;
                let (a, b) = rest.split_once(", ")?;
                let (a, b) = (self.operand(a, bits)?, self.operand(b, bits)?);
                self.push(name, Step::Binary { op, bits, a, b })
            }
        }
    }

    /// `[range(i32 a, b)] i32 @llvm.nvvm.read.ptx.sreg.R()`, the min/max and saturating-add
    /// intrinsics, `llvm.umul.with.overflow`.
    fn call(&mut self, name: &str, rest: &str) -> Option<()> {
        let (_, callee) = rest.split_once('@')?;
        if let Some(reg) = callee.strip_prefix("llvm.nvvm.read.ptx.sreg.") {
            let extent = match reg {
                "ntid.x()" => Extent::BlockX,
                "ntid.y()" => Extent::BlockY,
                "ntid.z()" => Extent::BlockZ,
                "nctaid.x()" => Extent::GridX,
                "nctaid.y()" => Extent::GridY,
                "nctaid.z()" => Extent::GridZ,
                _ => return None,
            };
            return self.push(name, Step::Extent(extent));
        }
        let (function, args) = callee.split_once('(')?;
        let args = args.strip_suffix(')')?;
        let (a, b) = args.split_once(", ")?;
        let (ty, a) = a.split_once(' ')?;
        let bits = int_bits(ty)?;
        let b = b.strip_prefix(ty)?.strip_prefix(' ')?;
        let (a, b) = (self.operand(a, bits)?, self.operand(b, bits)?);
        let (intrinsic, suffix) = function.strip_prefix("llvm.")?.rsplit_once('.')?;
        if suffix != ty {
            return None;
        }
        let op = match intrinsic {
            "umin" => BinOp::UMin,
            "umax" => BinOp::UMax,
            "smin" => BinOp::SMin,
            "smax" => BinOp::SMax,
            "uadd.sat" => BinOp::UAddSat,
            "umul.with.overflow" => {
                // A pair, read through `extractvalue`: no step of its own.
                self.products.push((name.to_string(), bits, a, b));
                return Some(());
            }
            _ => return None,
        };
        self.push(name, Step::Binary { op, bits, a, b })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holds(lines: &[&str], answer: &str, params: &[u64], block: (u32, u32, u32), grid: (u32, u32, u32)) -> bool {
        let names = [("%p0", "ptr"), ("%p1", "i64"), ("%p2", "i32"), ("%p3", "i64")];
        let condition = Condition::parse(lines, &names, answer).expect("parses");
        let param = |i: u32, _bits: u32| params.get(i as usize).copied();
        condition.holds(&LaunchValues { block, grid, param: &param }).expect("evaluates")
    }

    #[test]
    fn vecadd_lengths_and_a_flat_grid() {
        let lines = [
            "%oxide.uv.2 = call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.y()",
            "%oxide.uv.4 = call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.z()",
            "%oxide.uv.3 = or i32 %oxide.uv.2, %oxide.uv.4",
            "%oxide.uv.6 = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()",
            "%oxide.uv.5 = or i32 %oxide.uv.3, %oxide.uv.6",
            "%oxide.uv.10 = icmp eq i32 %oxide.uv.5, 1",
            "%oxide.uv.11 = icmp ule i64 %p3, %p1",
            "%oxide.uv.ok.0 = and i1 true, %oxide.uv.11",
            "%oxide.uv.ok.1 = and i1 %oxide.uv.ok.0, %oxide.uv.10",
        ];
        let p = [0, 100, 0, 100];
        assert!(holds(&lines, "%oxide.uv.ok.1", &p, (256, 1, 1), (4, 1, 1)));
        assert!(!holds(&lines, "%oxide.uv.ok.1", &p, (256, 2, 1), (4, 1, 1)));
        assert!(!holds(&lines, "%oxide.uv.ok.1", &p, (256, 1, 1), (4, 3, 1)));
        assert!(!holds(&lines, "%oxide.uv.ok.1", &[0, 99, 0, 100], (256, 1, 1), (4, 1, 1)));
    }

    #[test]
    fn arithmetic_wraps_at_its_width_and_saturates_where_asked() {
        let lines = [
            "%a = add i32 %p2, -1",
            "%b = zext i32 %a to i64",
            "%b2 = add i64 %b, 18446744073709551615",
            "%c = icmp eq i64 %b2, 4294967294",
            "%m = call { i64, i1 } @llvm.umul.with.overflow.i64(i64 %p1, i64 %p3)",
            "%v = extractvalue { i64, i1 } %m, 0",
            "%o = extractvalue { i64, i1 } %m, 1",
            "%s = select i1 %o, i64 -1, i64 %v",
            "%t = call i64 @llvm.uadd.sat.i64(i64 %s, i64 1)",
            "%u = icmp eq i64 %t, -1",
            "%w = and i1 %c, %u",
        ];
        // p2 = 0: `0 - 1` wraps to 2^32 - 1 in i32; the product overflows and saturates.
        assert!(holds(&lines, "%w", &[0, u64::MAX / 2, 0, 3], (1, 1, 1), (1, 1, 1)));
        assert!(!holds(&lines, "%w", &[0, 2, 0, 3], (1, 1, 1), (1, 1, 1)));
        assert!(!holds(&lines, "%w", &[0, u64::MAX / 2, 1, 3], (1, 1, 1), (1, 1, 1)));
    }

    #[test]
    fn signed_and_min_max_forms() {
        let lines = [
            "%a = sext i32 %p2 to i64",
            "%b = icmp slt i64 %a, 0",
            "%c = call i64 @llvm.smax.i64(i64 %a, i64 -5)",
            "%d = icmp eq i64 %c, -5",
            "%e = udiv i64 %p1, 3",
            "%f = icmp ugt i64 %e, 2",
            "%g = and i1 %b, %d",
            "%h = and i1 %g, %f",
        ];
        assert!(holds(&lines, "%h", &[0, 9, (-7i32) as u32 as u64, 0], (1, 1, 1), (1, 1, 1)));
        assert!(!holds(&lines, "%h", &[0, 9, (-2i32) as u32 as u64, 0], (1, 1, 1), (1, 1, 1)));
        assert!(!holds(&lines, "%h", &[0, 8, (-7i32) as u32 as u64, 0], (1, 1, 1), (1, 1, 1)));
    }

    #[test]
    fn a_twin_is_named_by_its_condition() {
        let names = [("%p0", "i64")];
        let parse = |line: &str| Condition::parse(&[line], &names, "%a").expect("parses");
        let (c1, c2) = (parse("%a = icmp ult i64 %p0, 5"), parse("%a = icmp ult i64 %p0, 6"));
        let name = twin_entry("vecadd", &c1);
        assert!(name.starts_with("vecadd__oxide_fast_") && name.len() == "vecadd__oxide_fast_".len() + 16, "{name}");
        assert_eq!(name, twin_entry("vecadd", &c1.clone()));
        assert_ne!(name, twin_entry("vecadd", &c2));
        assert!(crate::naming::is_reserved_entry_name(&name));
    }

    #[test]
    fn unknown_forms_and_non_integer_parameters_are_refused() {
        let names = [("%p0", "ptr"), ("%p1", "i64")];
        for line in [
            "%a = add nuw i64 %p1, 1",
            "%a = load i64, ptr %p0, align 8",
            "%a = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()",
            "%a = icmp ult ptr %p0, %p0",
            "%a = sdiv i64 %p1, 3",
        ] {
            assert_eq!(Condition::parse(&[line], &names, "true"), None, "{line}");
        }
        assert!(Condition::parse(&[], &names, "true").is_some());
    }
}
