//! After `opt`: a thread index computed before a loop and used only after it is computed again
//! after the loop, so it does not occupy registers while the loop runs.
//!
//! `let idx = thread::index_1d(); … loop { … } … out.get_mut(idx)` keeps the 64-bit `idx` (and
//! `idx * 16`) alive through n-body's tile loops: four registers that ptxas takes from the inner
//! loop's schedule (317 static stall cycles per iteration against nvcc's 274; nvcc reads
//! `%ctaid`/`%ntid`/`%tid` again after the loop and gets 268 here). So a value whose expression
//! uses only special-register reads that are the same for the whole thread (`%tid`, `%ctaid`,
//! `%ntid`, `%nctaid`), the function's parameters, constants and integer arithmetic, that is used
//! in no loop, is recomputed at the start of each block after a loop that uses it. The copies
//! read the registers through inline asm: `llc`'s CSE would merge `readnone` intrinsic reads
//! with the originals, and the value would be live across the loop again.

use std::collections::{HashMap, HashSet};

use super::ir::SREG;
use super::ir::{BinOp, Call, Callee, CastOp, Cfg, Edits, Function, I32, Inst, Module, Namer, Op, Type, Value, cfg};
use super::passes::State;

/// The special registers that hold one value for the whole life of a thread.
const THREAD_CONSTANT_SREGS: [&str; 12] = [
    "tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y", "ctaid.z", "ntid.x", "ntid.y", "ntid.z", "nctaid.x", "nctaid.y",
    "nctaid.z",
];

/// Largest expression recomputed (instructions): index arithmetic of three dimensions is ~30.
const MAX_NODES: usize = 48;

/// The pass (`passes.rs`): such values recomputed after their loops (see the module docs).
pub fn run(module: &mut Module, _: &mut State) -> bool {
    // Numbers the copies across the module.
    let mut counter = 0usize;
    let mut changed = false;
    for f in module.functions_mut() {
        changed |= rematerialize(f, &mut counter);
    }
    changed
}

/// Where each value is defined.
type Defs<'f> = HashMap<&'f str, (usize, usize)>;

fn rematerialize(f: &mut Function, counter: &mut usize) -> bool {
    let reads_sreg = f.blocks.iter().flat_map(|b| &b.insts).any(|i| i.callee().is_some_and(|c| c.starts_with(SREG)));
    if !reads_sreg {
        return false;
    }
    let cfg = Cfg::new(f);
    let in_loop = cfg.in_loop();
    if !in_loop.contains(&true) {
        return false;
    }
    // The blocks reachable from a loop: those after a loop (and the loops themselves).
    let after_loop = cfg.reachable_from(&in_loop);
    let defs = f.defs();
    // Uses of each value (debug records name values without using them: the original stays).
    let uses = cfg::uses(f);
    let mut namer = Namer::new(f, "oxide.rm");
    let mut edits = Edits::new();
    // The uses renamed to copies: (block, instruction) → (original, copy).
    let mut renamed: HashMap<(usize, usize), Vec<(&str, String)>> = HashMap::new();
    // Candidates: roots of a thread-constant expression defined outside loops, used in no loop
    // and by no phi, with a use in a block after a loop; in the order of their definitions.
    let mut roots: Vec<(&str, (usize, usize))> = defs.iter().map(|(&v, &at)| (v, at)).collect();
    roots.sort_by_key(|&(_, at)| at);
    for (root, (def_block, _)) in roots {
        let Some(us) = uses.get(root) else { continue };
        let in_loop_or_phi =
            |&(b, i): &(usize, usize)| in_loop[b] || matches!(f.blocks[b].insts[i].op(), Op::Phi { .. });
        if !copyable(root) || in_loop[def_block] || us.iter().any(in_loop_or_phi) {
            continue;
        }
        let mut targets: Vec<usize> = us.iter().map(|&(b, _)| b).filter(|&b| b != def_block && after_loop[b]).collect();
        targets.sort_unstable();
        targets.dedup();
        if targets.is_empty() {
            continue;
        }
        let Some(tree) = thread_constant_tree(f, &defs, root) else { continue };
        // A bare register read is left to ptxas (it reads it again where it needs it).
        if tree.len() < 2 {
            continue;
        }
        for b in targets {
            *counter += 1;
            let n = *counter;
            let copy_of: HashMap<&str, String> = tree.iter().map(|&v| (v, namer.named(&format!("{n}.{v}")))).collect();
            // After the block's phis, without the originals' debug locations.
            let copies = tree.iter().map(|&v| {
                let (db, di) = defs[v];
                let original = &f.blocks[db].insts[di];
                match sreg_read(original) {
                    Some(reg) => Inst::assign(&copy_of[v], read_through_asm(reg)),
                    None => original.rename(|name| copy_of.get(name).cloned()).with_attachments(""),
                }
            });
            edits.insert_before(b, f.blocks[b].after_phis(), copies);
            for &(ub, ui) in us {
                if ub == b {
                    renamed.entry((ub, ui)).or_default().push((root, copy_of[root].clone()));
                }
            }
        }
    }
    for ((b, i), pairs) in renamed {
        let mut inst = f.blocks[b].insts[i].clone();
        for (from, to) in pairs {
            inst = inst.replace_use(from, &Value::Local(to));
        }
        edits.replace(b, i, vec![inst]);
    }
    edits.apply(f)
}

/// Whether a copy of `name` can be named after it (a quoted name is not copied).
fn copyable(name: &str) -> bool {
    !name.starts_with('"')
}

/// The values of `root`'s expression in definition order (operands first), if every leaf is a
/// thread-constant register read, a parameter or a constant, and every node integer arithmetic.
fn thread_constant_tree<'f>(f: &'f Function, defs: &Defs<'f>, root: &'f str) -> Option<Vec<&'f str>> {
    let mut order = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![(root, false)];
    while let Some((v, expanded)) = stack.pop() {
        if expanded {
            order.push(v);
            continue;
        }
        if !seen.insert(v) {
            continue;
        }
        let Some(&(b, i)) = defs.get(v) else {
            // A parameter (not defined in the body).
            seen.remove(v);
            continue;
        };
        let inst = &f.blocks[b].insts[i];
        if sreg_read(inst).is_some() {
            order.push(v);
            continue;
        }
        if !is_integer_arithmetic(inst.op()) {
            return None;
        }
        stack.push((v, true));
        stack.extend(inst.uses().into_iter().filter(|o| copyable(o)).map(|o| (o, false)));
        if seen.len() > MAX_NODES {
            return None;
        }
    }
    Some(order)
}

/// Integer (not vector) `add`, `sub`, `mul`, `shl`, `lshr`, `and`, `or`, `xor`, `zext`, `sext`,
/// `trunc`.
fn is_integer_arithmetic(op: &Op) -> bool {
    match op {
        Op::Bin { op, ty: Type::Int(_), .. } => matches!(
            op,
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl | BinOp::LShr | BinOp::And | BinOp::Or | BinOp::Xor
        ),
        Op::Cast { op, from: Type::Int(_), to: Type::Int(_), .. } => {
            matches!(op, CastOp::ZExt | CastOp::SExt | CastOp::Trunc)
        }
        _ => false,
    }
}

/// `reg` of `[tail] call … i32 @llvm.nvvm.read.ptx.sreg.<reg>()` for a thread-constant register.
fn sreg_read(inst: &Inst) -> Option<&'static str> {
    let Op::Call(c) = inst.op() else { return None };
    if !(c.tail.is_none() || c.tail.as_deref() == Some("tail")) || !c.args.is_empty() {
        return None;
    }
    let name = c.name()?.strip_prefix(SREG)?;
    THREAD_CONSTANT_SREGS.iter().copied().find(|r| *r == name)
}

/// `call i32 asm "mov.u32 $0, %<reg>;", "=r"()`: a read that `llc` does not merge with others.
fn read_through_asm(reg: &str) -> Op {
    Op::Call(Call {
        tail: None,
        head: String::new(),
        ret: I32,
        callee: Callee::Asm(format!("asm \"mov.u32 $0, %{reg};\", \"=r\"")),
        args: Vec::new(),
        fn_attrs: String::new(),
    })
}
