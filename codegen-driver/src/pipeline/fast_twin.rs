//! After the text passes: each versioned kernel gets an unchecked twin (named by
//! `oxide_contract::fast_launch::twin_entry`), its fast copy alone, which the host launches where the entry test holds
//! (`oxide_contract::fast_launch` says why and owns the condition).
//!
//! The twin is the versioned kernel with the entry's branch on `U` made unconditional, so every
//! block of the checked copy is unreachable and dropped: what runs is exactly the fast copy, on
//! exactly the launches for which the kernel itself would have chosen it. Its source lines stay
//! (profilers attribute its time to them): a `DISubprogram` describes one function, so the twin
//! gets a copy of the kernel's, and of each location whose scope or inlining chain leads to it.
//! A debug build (`-G`) gets no twins (one kernel to step through, its variables described once).

use super::ir::Module;
use super::passes::{State, on_text};
use std::collections::HashMap;

use oxide_contract::fast_launch::FastLaunch;

use super::ir_functions::{split_blocks, successor_indices, terminator_start};
use super::uniform_bounds::{FAST, UV};

/// The pass (`passes.rs`): the twins of the kernels `uniform_bounds` versioned.
pub fn run(module: &mut Module, state: &mut State) -> bool {
    on_text(module, |text| add(text, &state.fast))
}

/// `module` with a twin after each kernel of `kernels` (its name, and the twin's entry name in
/// its [`FastLaunch`]; module docs).
pub fn add(module: &str, kernels: &[(String, FastLaunch)]) -> String {
    if kernels.is_empty() {
        return module.to_string();
    }
    let mut metadata = Metadata::new(module);
    let mut out = String::with_capacity(module.len() * 3 / 2);
    let mut lines = module.lines();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        let twin_of = |n: &str| kernels.iter().find(|(k, _)| k == n).map(|(_, fast)| fast.entry.as_str());
        let Some((name, twin_name)) = kernel_name(line).and_then(|n| Some((n, twin_of(n)?))) else { continue };
        let mut body = Vec::new();
        for l in lines.by_ref() {
            out.push_str(l);
            out.push('\n');
            if l == "}" {
                break;
            }
            body.push(l);
        }
        if let Some(twin) = twin(line, name, twin_name, &body, &mut metadata) {
            out.push('\n');
            out.push_str(&twin);
        }
    }
    for node in &metadata.added {
        out.push_str(node);
        out.push('\n');
    }
    out
}

/// The module's metadata nodes (`!N = …`), and the copies made for twins.
struct Metadata<'m> {
    nodes: HashMap<u64, &'m str>,
    next: u64,
    added: Vec<String>,
}

impl<'m> Metadata<'m> {
    fn new(module: &'m str) -> Metadata<'m> {
        let nodes: HashMap<u64, &str> = module
            .lines()
            .filter_map(|l| {
                let (id, rest) = l.strip_prefix('!')?.split_once(" = ")?;
                Some((id.parse().ok()?, rest))
            })
            .collect();
        let next = nodes.keys().max().map_or(0, |m| m + 1);
        Metadata { nodes, next, added: Vec::new() }
    }

    /// The node `id` for the twin whose kernel's subprogram is `from` and the twin's `to`:
    /// itself when its `scope:`/`inlinedAt:` chain does not lead to `from`, else a copy (made
    /// once, in `copies`) that leads to `to`.
    fn remap(&mut self, id: u64, from: u64, to: u64, copies: &mut HashMap<u64, u64>) -> u64 {
        if id == from {
            return to;
        }
        if let Some(&copy) = copies.get(&id) {
            return copy;
        }
        let Some(text) = self.nodes.get(&id).copied() else { return id };
        // Only locations and lexical blocks lead to the subprogram (others: themselves).
        if !(text.contains("!DILocation(") || text.contains("!DILexicalBlock")) {
            return id;
        }
        let mut fields = Vec::new();
        for key in ["scope: !", "inlinedAt: !"] {
            if let Some((_, rest)) = text.split_once(key) {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(target) = digits.parse::<u64>() {
                    fields.push((key, target));
                }
            }
        }
        let mut mapped = Vec::new();
        for &(key, target) in &fields {
            let new = self.remap(target, from, to, copies);
            if new != target {
                mapped.push((key, target, new));
            }
        }
        if mapped.is_empty() {
            return id;
        }
        let mut copy = text.to_string();
        for (key, target, new) in mapped {
            copy = copy.replacen(&format!("{key}{target}"), &format!("{key}{new}"), 1);
        }
        let new_id = self.next;
        self.next += 1;
        self.added.push(format!("!{new_id} = {copy}"));
        copies.insert(id, new_id);
        new_id
    }

    /// A copy of the subprogram `id` for the twin, `None` when `id` is not one.
    fn copy_subprogram(&mut self, id: u64) -> Option<u64> {
        let text = self.nodes.get(&id)?;
        if !text.starts_with("distinct !DISubprogram(") {
            return None;
        }
        let new_id = self.next;
        self.next += 1;
        self.added.push(format!("!{new_id} = {text}"));
        Some(new_id)
    }
}

/// The name of the kernel a `define ptx_kernel … @name(… {` line opens.
fn kernel_name(line: &str) -> Option<&str> {
    if !line.starts_with("define ptx_kernel ") || !line.trim_end().ends_with('{') {
        return None;
    }
    line.split_once(" @")?.1.split_once('(').map(|(name, _)| name)
}

/// The twin `twin_name` of kernel `name` (its `define` line and body), or `None` when the body
/// does not start with the entry test's branch.
fn twin(define: &str, name: &str, twin_name: &str, body: &[&str], metadata: &mut Metadata<'_>) -> Option<String> {
    let blocks = split_blocks(body);
    if blocks[0].label.as_deref() != Some(UV) {
        return None;
    }
    let branch = terminator_start(&blocks[0].lines)?;
    // The entry's first successor, `br i1 %U, label %oxide.fast.…, label %…`.
    let succs = successor_indices(&blocks);
    let first = *succs[0].first()?;
    let fast = blocks[first].label.clone()?;
    if !fast.trim_start_matches('"').starts_with(FAST) {
        return None;
    }
    // The blocks reachable with the entry branching to the fast copy only.
    let mut reachable = vec![false; blocks.len()];
    let mut stack = vec![first];
    reachable[0] = true;
    while let Some(b) = stack.pop() {
        if !std::mem::replace(&mut reachable[b], true) {
            stack.extend(succs[b].iter().copied());
        }
    }
    let (head, rest) = define.split_once(&format!("@{name}("))?;
    // The kernel's subprogram and the twin's copy of it (none: no debug locations in the twin).
    let subprogram = debug_attachment(rest).and_then(|from| Some((from, metadata.copy_subprogram(from)?)));
    let rest = match subprogram {
        Some((from, to)) => rest.replacen(&format!(" !dbg !{from}"), &format!(" !dbg !{to}"), 1),
        None => without_attachment(rest, " !dbg !"),
    };
    let mut copies = HashMap::new();
    let mut text = format!("{head}@{twin_name}({rest}\n");
    for (b, block) in blocks.iter().enumerate().filter(|(b, _)| reachable[*b]) {
        if let Some(label) = &block.label {
            text.push_str(&format!("{label}:\n"));
        }
        for (i, line) in block.lines.iter().enumerate() {
            let code = line.trim_start();
            if code.starts_with("#dbg_") {
                continue;
            }
            if b == 0 && i == branch {
                text.push_str(&format!("  br label %{fast}\n"));
                continue;
            }
            let line = match subprogram {
                Some((from, to)) => with_locations(line, |id| metadata.remap(id, from, to, &mut copies)),
                None => without_debug_location(line),
            };
            text.push_str(&without_loop_metadata(&line));
            text.push('\n');
        }
    }
    text.push_str("}\n");
    Some(text)
}

/// The `!N` of a `define` line's `!dbg !N` attachment.
fn debug_attachment(rest: &str) -> Option<u64> {
    let (_, tail) = rest.split_once(" !dbg !")?;
    tail.chars().take_while(char::is_ascii_digit).collect::<String>().parse().ok()
}

/// `line` with each `, !dbg !N` location replaced by `!{map(N)}`.
fn with_locations(line: &str, mut map: impl FnMut(u64) -> u64) -> String {
    let key = ", !dbg !";
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find(key) {
        let start = i + key.len();
        let end = rest[start..].find(|c: char| !c.is_ascii_digit()).map_or(rest.len(), |j| start + j);
        out.push_str(&rest[..start]);
        match rest[start..end].parse::<u64>() {
            Ok(id) => out.push_str(&map(id).to_string()),
            Err(_) => out.push_str(&rest[start..end]),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// `line` without the metadata attachment `key` (`, !dbg !`, `, !llvm.loop !`, a `define`
/// line's ` !dbg !`).
fn without_attachment(line: &str, key: &str) -> String {
    let mut out = line.to_string();
    while let Some(i) = out.find(key) {
        let start = i + key.len();
        let end = out[start..].find(|c: char| !c.is_ascii_digit()).map_or(out.len(), |j| start + j);
        out.replace_range(i..end, "");
    }
    out
}

/// An instruction without its debug location (a kernel without a subprogram).
fn without_debug_location(line: &str) -> String {
    without_attachment(line, ", !dbg !")
}

/// An instruction without `!llvm.loop` metadata: the loops were unrolled by `opt` already, and
/// its locations would lead to the kernel's subprogram.
fn without_loop_metadata(line: &str) -> String {
    without_attachment(line, ", !llvm.loop !")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kernel `name` with a twin `<name>__oxide_fast` (its condition does not matter here).
    fn twins(name: &str) -> Vec<(String, FastLaunch)> {
        let condition = oxide_contract::fast_launch::Condition::parse(&[], &[], "true").expect("parses");
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
    fn the_twin_is_the_fast_copy_alone() {
        let out = add(KERNEL, &twins("k"));
        assert!(out.starts_with(KERNEL), "{out}");
        let twin = &out[KERNEL.len()..];
        let expected = "\ndefine ptx_kernel void @k__oxide_fast(ptr %a, i64 %n) #0 {\noxide.uv:\n  \
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
        let out = add(&module, &twins("k"));
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
        assert_eq!(add(KERNEL, &twins("other")), KERNEL);
    }
}
