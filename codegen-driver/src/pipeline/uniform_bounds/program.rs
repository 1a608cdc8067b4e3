//! The entry test `U` as data: a straight-line program of `oxide_contract::fast_launch` steps
//! over the launch's uniform values, built once and printed both into the kernel's entry block
//! and (as it is) into the manifest for the host.

use std::collections::{BTreeSet, HashMap};

use oxide_contract::fast_launch::{BinOp as HostOp, CastOp as HostCast, Extent, Operand, Pred as HostPred, Step};

use crate::markers::VERSION_ENTRY;
use crate::pipeline::ir::{BinOp, Call, CastOp, Flags, Function, I1, I32, Inst, Op, Pred, Type, Value};

/// The steps built so far, each once.
#[derive(Default)]
pub(super) struct Program {
    pub(super) steps: Vec<Step>,
    cse: HashMap<Step, Operand>,
    /// Steps with a name of their own, which a later pass finds (`markers::GRID_THREADS_U32`).
    names: HashMap<u32, &'static str>,
}

impl Program {
    /// `step`'s value, built once.
    pub(super) fn emit(&mut self, step: Step) -> Operand {
        if let Some(&v) = self.cse.get(&step) {
            return v;
        }
        let v = Operand::Step(self.steps.len() as u32);
        self.steps.push(step);
        self.cse.insert(step, v);
        v
    }

    /// `step` as a step of its own (never shared: the program's answer is its last step).
    pub(super) fn push(&mut self, step: Step) -> Operand {
        self.steps.push(step);
        Operand::Step(self.steps.len() as u32 - 1)
    }

    /// `step` under the name `name` (never shared with another step).
    pub(super) fn emit_named(&mut self, step: Step, name: &'static str) -> Operand {
        let v = Operand::Step(self.steps.len() as u32);
        self.names.insert(self.steps.len() as u32, name);
        self.steps.push(step);
        v
    }

    /// The step computing `v`, if a step does.
    pub(super) fn step(&self, v: Operand) -> Option<&Step> {
        match v {
            Operand::Step(i) => self.steps.get(i as usize),
            _ => None,
        }
    }

    /// The name of step `i` in the entry block.
    fn name(&self, i: u32) -> String {
        match self.names.get(&i) {
            Some(n) => n.to_string(),
            None => format!("{VERSION_ENTRY}.{}", i + 1),
        }
    }

    /// The steps as instructions of the entry block of `f`, with the declarations they call;
    /// `block_size` bounds the block extents' reads (`range`). Returns the instructions and the
    /// value of `answer`.
    pub(super) fn print(
        &self,
        f: &Function,
        block_size: u32,
        answer: Operand,
        decls: &mut BTreeSet<String>,
    ) -> (Vec<Inst>, Value) {
        let mut out = Vec::new();
        for (i, step) in self.steps.iter().enumerate() {
            let name = self.name(i as u32);
            let v = |o: Operand, bits: u32| self.value(f, o, bits);
            match *step {
                Step::Binary { op, bits, a, b } => {
                    let ty = Type::Int(bits);
                    let (a, b) = (v(a, bits), v(b, bits));
                    match bin_op(op) {
                        Some(op) => out.push(Inst::assign(&name, Op::Bin { op, flags: Flags::NONE, ty, a, b })),
                        None if op == HostOp::UMulSat => {
                            let intrinsic = format!("llvm.umul.with.overflow.i{bits}");
                            let pair = Type::Struct(vec![ty.clone(), I1]);
                            decls.insert(format!("declare {pair} @{intrinsic}({ty}, {ty})"));
                            let (m, value, over) = (format!("{name}.m"), format!("{name}.v"), format!("{name}.o"));
                            out.push(Inst::assign(
                                &m,
                                Op::Call(Call::new(&intrinsic, pair.clone(), vec![(ty.clone(), a), (ty.clone(), b)])),
                            ));
                            for (n, k) in [(&value, 0), (&over, 1)] {
                                out.push(Inst::assign(
                                    n,
                                    Op::ExtractValue { agg_ty: pair.clone(), agg: Value::local(&m), indices: vec![k] },
                                ));
                            }
                            let all = Value::int(u64::MAX, &ty);
                            out.push(Inst::assign(
                                &name,
                                Op::Select { cond: Value::local(&over), ty, a: all, b: Value::local(&value) },
                            ));
                        }
                        None => {
                            let intrinsic = format!("llvm.{}.i{bits}", intrinsic_name(op));
                            decls.insert(format!("declare {ty} @{intrinsic}({ty}, {ty})"));
                            out.push(Inst::assign(
                                &name,
                                Op::Call(Call::new(&intrinsic, ty.clone(), vec![(ty.clone(), a), (ty, b)])),
                            ));
                        }
                    }
                }
                Step::Compare { pred, bits, a, b } => {
                    let (a, b) = (v(a, bits), v(b, bits));
                    out.push(Inst::assign(
                        &name,
                        Op::Icmp { pred: icmp_pred(pred), samesign: false, ty: Type::Int(bits), a, b },
                    ));
                }
                Step::Select { c, bits, a, b } => {
                    let (cond, a, b) = (v(c, 1), v(a, bits), v(b, bits));
                    out.push(Inst::assign(&name, Op::Select { cond, ty: Type::Int(bits), a, b }));
                }
                Step::Cast { op, from, to, a } => {
                    let op = match op {
                        HostCast::ZExt => CastOp::ZExt,
                        HostCast::SExt => CastOp::SExt,
                        HostCast::Trunc => CastOp::Trunc,
                    };
                    let a = v(a, from);
                    out.push(Inst::assign(
                        &name,
                        Op::Cast { op, flags: Flags::NONE, from: Type::Int(from), a, to: Type::Int(to) },
                    ));
                }
                Step::Extent(e) => {
                    let reg = extent_register(e);
                    let intrinsic = format!("{}{reg}", super::SREG);
                    decls.insert(format!("declare i32 @{intrinsic}()"));
                    let mut call = Call::new(&intrinsic, I32, Vec::new());
                    // A block has at least one thread and at most the launch bounds' many.
                    if reg.starts_with("ntid.") {
                        call.head = format!("range(i32 1, {}) ", block_size + 1);
                    }
                    out.push(Inst::assign(&name, Op::Call(call)));
                }
            }
        }
        (out, self.value(f, answer, 1))
    }

    /// `o` as an IR value of `bits` bits.
    fn value(&self, f: &Function, o: Operand, bits: u32) -> Value {
        match o {
            Operand::Const(c) => Value::int(c, &Type::Int(bits)),
            Operand::Param { index, .. } => {
                Value::Local(f.params[index as usize].name.clone().expect("a parameter the bounder read by name"))
            }
            Operand::Step(i) => Value::Local(self.name(i)),
        }
    }
}

fn bin_op(op: HostOp) -> Option<BinOp> {
    Some(match op {
        HostOp::Add => BinOp::Add,
        HostOp::Sub => BinOp::Sub,
        HostOp::Mul => BinOp::Mul,
        HostOp::UDiv => BinOp::UDiv,
        HostOp::URem => BinOp::URem,
        HostOp::Shl => BinOp::Shl,
        HostOp::LShr => BinOp::LShr,
        HostOp::AShr => BinOp::AShr,
        HostOp::And => BinOp::And,
        HostOp::Or => BinOp::Or,
        HostOp::Xor => BinOp::Xor,
        HostOp::UMin | HostOp::UMax | HostOp::SMin | HostOp::SMax | HostOp::UAddSat | HostOp::UMulSat => return None,
    })
}

/// The step of an IR integer operation the host evaluates.
pub(super) fn host_op(op: BinOp) -> Option<HostOp> {
    Some(match op {
        BinOp::Add => HostOp::Add,
        BinOp::Sub => HostOp::Sub,
        BinOp::Mul => HostOp::Mul,
        BinOp::UDiv => HostOp::UDiv,
        BinOp::URem => HostOp::URem,
        BinOp::Shl => HostOp::Shl,
        BinOp::LShr => HostOp::LShr,
        BinOp::AShr => HostOp::AShr,
        BinOp::And => HostOp::And,
        BinOp::Or => HostOp::Or,
        BinOp::Xor => HostOp::Xor,
        BinOp::SDiv | BinOp::SRem => return None,
    })
}

/// The min/max intrinsic `llvm.<name>.iN` of a step, by its name.
pub(super) fn min_max(intrinsic: &str) -> Option<HostOp> {
    Some(match intrinsic {
        "umin" => HostOp::UMin,
        "umax" => HostOp::UMax,
        "smin" => HostOp::SMin,
        "smax" => HostOp::SMax,
        _ => return None,
    })
}

fn intrinsic_name(op: HostOp) -> &'static str {
    match op {
        HostOp::UMin => "umin",
        HostOp::UMax => "umax",
        HostOp::SMin => "smin",
        HostOp::SMax => "smax",
        _ => "uadd.sat",
    }
}

pub(super) fn host_pred(p: Pred) -> HostPred {
    match p {
        Pred::Eq => HostPred::Eq,
        Pred::Ne => HostPred::Ne,
        Pred::Ult => HostPred::Ult,
        Pred::Ule => HostPred::Ule,
        Pred::Ugt => HostPred::Ugt,
        Pred::Uge => HostPred::Uge,
        Pred::Slt => HostPred::Slt,
        Pred::Sle => HostPred::Sle,
        Pred::Sgt => HostPred::Sgt,
        Pred::Sge => HostPred::Sge,
    }
}

fn icmp_pred(p: HostPred) -> Pred {
    match p {
        HostPred::Eq => Pred::Eq,
        HostPred::Ne => Pred::Ne,
        HostPred::Ult => Pred::Ult,
        HostPred::Ule => Pred::Ule,
        HostPred::Ugt => Pred::Ugt,
        HostPred::Uge => Pred::Uge,
        HostPred::Slt => Pred::Slt,
        HostPred::Sle => Pred::Sle,
        HostPred::Sgt => Pred::Sgt,
        HostPred::Sge => Pred::Sge,
    }
}

/// The special register (`ntid.x`) of a launch extent.
pub(super) fn extent_register(e: Extent) -> &'static str {
    match e {
        Extent::BlockX => "ntid.x",
        Extent::BlockY => "ntid.y",
        Extent::BlockZ => "ntid.z",
        Extent::GridX => "nctaid.x",
        Extent::GridY => "nctaid.y",
        Extent::GridZ => "nctaid.z",
    }
}

/// The launch extent a special register (`ntid.x`) reads.
pub(super) fn extent_of(reg: &str) -> Option<Extent> {
    Some(match reg {
        "ntid.x" => Extent::BlockX,
        "ntid.y" => Extent::BlockY,
        "ntid.z" => Extent::BlockZ,
        "nctaid.x" => Extent::GridX,
        "nctaid.y" => Extent::GridY,
        "nctaid.z" => Extent::GridZ,
        _ => return None,
    })
}
