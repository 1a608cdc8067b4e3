//! After the other passes: each versioned kernel gets an unchecked twin (named by
//! `oxide_contract::fast_launch::twin_entry`), its fast copy alone, which the host launches where the entry test holds
//! (`oxide_contract::fast_launch` says why and owns the condition).
//!
//! The twin is the versioned kernel with the entry's branch on `U` made unconditional, so every
//! block of the checked copy is unreachable and dropped: what runs is exactly the fast copy, on
//! exactly the launches for which the kernel itself would have chosen it. Its source lines stay
//! (profilers attribute its time to them): a `DISubprogram` describes one function, so the twin
//! gets a copy of the kernel's, and of each location whose scope or inlining chain leads to it.
//! A debug build (`-G`) gets no twins (one kernel to step through, its variables described once).
//!
//! The kernel itself then keeps its checked copy alone: its entry test and its own fast copy go.
//! Both served only launches that bypass the host's choice (by name from CUDA C++, cooperative
//! launches, `CUDA_OXIDE_TWINS=0`), which now run the checked body, as an unversioned kernel
//! does, and they cost a third of the kernel's code: for the bench's kernels 576 → 421 KB of PTX,
//! 551 → 414 KB of cubin, 2875 → 2485 KB of stripped binary, 1.62 → 1.39 s of device build
//! (`bench/build-cost.sh`, bench/notes.md "Three copies of a body"). `CUDA_OXIDE_KERNEL_FAST_COPY=1`
//! keeps them (to measure both).

use std::collections::HashMap;

use oxide_contract::fast_launch::FastLaunch;

use super::ir::debug_copy::DebugCopier;
use super::ir::{Block, Cfg, Function, Inst, Item, Module, Op};
use super::passes::State;
use crate::markers::{VERSION_ENTRY, is_fast_copy_label};

/// The pass (`passes.rs`): the twins of the kernels `uniform_bounds` versioned.
pub fn run(module: &mut Module, state: &mut State) -> bool {
    add(module, &state.fast)
}

/// Puts a twin after each kernel of `kernels` (its name, and the twin's entry name in its
/// [`FastLaunch`]; module docs); whether it made one.
pub fn add(module: &mut Module, kernels: &[(String, FastLaunch)]) -> bool {
    if kernels.is_empty() {
        return false;
    }
    let mut debug = DebugCopier::new(module);
    let mut items = Vec::with_capacity(module.items.len() + kernels.len());
    let mut added = false;
    for item in std::mem::take(&mut module.items) {
        let twin = match &item {
            Item::Function(f) if f.is_kernel => {
                kernels.iter().find(|(k, _)| *k == f.name).and_then(|(_, fast)| twin(f, &fast.entry, &mut debug))
            }
            _ => None,
        };
        let mut item = item;
        if twin.is_some()
            && !keep_fast_copy()
            && let Item::Function(f) = &mut item
        {
            checked_only(f);
        }
        items.push(item);
        if let Some(t) = twin {
            items.push(Item::Line(String::new()));
            items.push(Item::Function(t));
            added = true;
        }
    }
    module.items = items;
    debug.finish(module);
    added
}

/// Whether versioned kernels with a twin keep their own fast copy and entry test
/// (`CUDA_OXIDE_KERNEL_FAST_COPY=1`; module docs).
fn keep_fast_copy() -> bool {
    std::env::var("CUDA_OXIDE_KERNEL_FAST_COPY").is_ok_and(|v| v == "1")
}

/// The versioned kernel `f` reduced to its checked copy: the entry branches to it alone, the
/// fast copy's blocks and the entry test's values (now unused) go.
fn checked_only(f: &mut Function) {
    let entry = &mut f.blocks[0];
    let Some(at) = entry.terminator_index() else { return };
    let Op::CondBr { els: checked, .. } = entry.insts[at].op() else { return };
    entry.insts[at] = Inst::effect(Op::Br { dest: checked.clone() });
    let cfg = Cfg::new(f);
    let mut b = 0;
    f.blocks.retain(|_| {
        b += 1;
        cfg.reachable[b - 1]
    });
    // The entry test's values: pure, and now used by nothing (the index reads it hoisted stay).
    loop {
        let used: std::collections::HashSet<String> =
            f.blocks.iter().flat_map(|b| &b.insts).flat_map(|i| i.uses()).map(str::to_string).collect();
        let before = f.blocks[0].insts.len();
        f.blocks[0].insts.retain(|i| i.result().is_none_or(|r| used.contains(r)));
        if f.blocks[0].insts.len() == before {
            break;
        }
    }
}

/// The twin `name` of the versioned kernel `f`, or `None` when its entry is not the test's
/// branch to a fast copy.
fn twin(f: &Function, name: &str, debug: &mut DebugCopier) -> Option<Function> {
    let entry = &f.blocks[0];
    if entry.label.as_deref() != Some(VERSION_ENTRY) {
        return None;
    }
    let branch = entry.terminator_index()?;
    let Op::CondBr { then: fast, .. } = entry.insts[branch].op() else { return None };
    if !is_fast_copy_label(fast) {
        return None;
    }
    // The blocks reachable with the entry branching to the fast copy only.
    let cfg = Cfg::new(f);
    let first = f.block_index(fast)?;
    let mut reachable = vec![false; f.blocks.len()];
    reachable[0] = true;
    let mut stack = vec![first];
    while let Some(b) = stack.pop() {
        if !std::mem::replace(&mut reachable[b], true) {
            stack.extend(cfg.succs[b].iter().copied());
        }
    }
    // The kernel's subprogram and the twin's copy of it (none: no debug locations in the twin).
    let subprogram = f.subprogram.and_then(|from| Some((from, debug.copy_subprogram(from)?)));
    let mut copies = HashMap::new();
    let mut blocks = Vec::new();
    for (b, block) in f.blocks.iter().enumerate().filter(|(b, _)| reachable[*b]) {
        let mut copy = Block::new(block.label.as_deref().unwrap_or_default());
        copy.label.clone_from(&block.label);
        copy.lead.clear();
        for (i, inst) in block.insts.iter().enumerate() {
            if matches!(inst.op(), Op::DebugRecord) {
                continue;
            }
            if b == 0 && i == branch {
                copy.insts.push(Inst::effect(Op::Br { dest: fast.clone() }));
                continue;
            }
            // Locations lead to the twin's subprogram; loops were unrolled by `opt` already, and
            // their `!llvm.loop` locations would lead to the kernel's.
            copy.insts.push(inst.map_attachments(|key, value| match key {
                "!llvm.loop" => None,
                "!dbg" => {
                    let (from, to) = subprogram?;
                    let id: u64 = value.strip_prefix('!')?.parse().ok()?;
                    Some(format!("!{}", debug.remap(id, from, to, &mut copies)))
                }
                _ => Some(value.to_string()),
            }));
        }
        blocks.push(copy);
    }
    let header = f.header_for_copy(name, subprogram.map(|(_, to)| to));
    Some(f.with_header(header, blocks))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `module` with the twins of `kernels`, as text.
    fn with_twins(module: &str, kernels: &[(String, FastLaunch)]) -> String {
        let mut m = Module::parse(module);
        add(&mut m, kernels);
        m.to_string()
    }

    /// Kernel `name` with a twin `<name>__oxide_fast` (its condition does not matter here).
    fn twins(name: &str) -> Vec<(String, FastLaunch)> {
        let condition = oxide_contract::fast_launch::Condition { steps: Vec::new() };
        vec![(name.to_string(), FastLaunch { entry: format!("{name}__oxide_fast"), condition })]
    }

    const KERNEL: &str = "define ptx_kernel void @k(ptr %a, i64 %n) #0 !dbg !7 {\n\
        oxide.uv:\n  %oxide.uv.ok.0 = icmp ule i64 %n, 9\n  \
        br i1 %oxide.uv.ok.0, label %oxide.fast.start, label %start\n\
        start:\n  call void @oxide_bounds_fail(i1 true), !dbg !9\n  ret void\n\
        oxide.fast.start:\n  #dbg_value(i64 %n, !10, !DIExpression(), !9)\n  \
        store i64 %n, ptr %a, align 8, !dbg !9, !noalias !3\n  br label %oxide.fast.exit, !llvm.loop !12\n\
        oxide.fast.exit:\n  ret void, !dbg !9\n}\n";

    #[test]
    fn the_twin_is_the_fast_copy_alone_and_the_kernel_its_checked_copy() {
        let out = with_twins(KERNEL, &twins("k"));
        let (kernel, twin) = out.split_once("\ndefine ptx_kernel void @k__oxide_fast").expect("a twin");
        // The kernel: its entry goes to the checked copy; the test's value and the fast copy go.
        let checked = "define ptx_kernel void @k(ptr %a, i64 %n) #0 !dbg !7 {\noxide.uv:\n  br label %start\n\
            start:\n  call void @oxide_bounds_fail(i1 true), !dbg !9\n  ret void\n}\n";
        assert_eq!(kernel, checked);
        let expected = "(ptr %a, i64 %n) #0 {\noxide.uv:\n  \
            %oxide.uv.ok.0 = icmp ule i64 %n, 9\n  br label %oxide.fast.start\noxide.fast.start:\n  \
            store i64 %n, ptr %a, align 8, !noalias !3\n  br label %oxide.fast.exit\noxide.fast.exit:\n  ret void\n}\n";
        assert_eq!(twin, expected);
    }

    #[test]
    fn the_twin_gets_its_own_subprogram_and_the_locations_that_lead_to_it() {
        // !7: the kernel's subprogram; !9 a location in it; !11 a location inlined at !10 (in
        // !7) from the callee !8, whose own lines (!12) need no copy.
        let metadata = "!7 = distinct !DISubprogram(name: \"k\", unit: !0)\n\
            !8 = distinct !DISubprogram(name: \"inner\", unit: !0)\n\
            !9 = !DILocation(line: 3, scope: !7)\n\
            !10 = distinct !DILocation(line: 4, scope: !7)\n\
            !11 = !DILocation(line: 20, column: 2, scope: !8, inlinedAt: !10)\n\
            !12 = !DILocation(line: 21, scope: !8)\n";
        let module = KERNEL.replace("!dbg !9, !noalias", "!dbg !11, !noalias").to_string() + metadata;
        let out = with_twins(&module, &twins("k"));
        let twin = &out[out.find("@k__oxide_fast").expect("a twin")..];
        assert!(twin.contains("#0 !dbg !13 {"), "{out}");
        assert!(
            out.ends_with(
                "!13 = distinct !DISubprogram(name: \"k\", unit: !0)\n\
             !14 = distinct !DILocation(line: 4, scope: !13)\n\
             !15 = !DILocation(line: 20, column: 2, scope: !8, inlinedAt: !14)\n\
             !16 = !DILocation(line: 3, scope: !13)\n"
            ),
            "{out}"
        );
        assert!(twin.contains("store i64 %n, ptr %a, align 8, !dbg !15, !noalias !3"), "{out}");
        assert!(twin.contains("ret void, !dbg !16"), "{out}");
        assert!(!twin.contains("#dbg_value") && !twin.contains("!llvm.loop"), "{out}");
    }

    #[test]
    fn only_the_named_kernels_get_one() {
        assert_eq!(with_twins(KERNEL, &twins("other")), KERNEL);
    }
}
