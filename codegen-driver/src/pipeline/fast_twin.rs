//! After the text passes: each versioned kernel gets an unchecked twin, `<entry>__oxide_fast`,
//! its fast copy alone, which the host launches where the entry test holds
//! (`oxide_contract::fast_launch` says why and owns the condition).
//!
//! The twin is the versioned kernel with the entry's branch on `U` made unconditional, so every
//! block of the checked copy is unreachable and dropped: what runs is exactly the fast copy, on
//! exactly the launches for which the kernel itself would have chosen it. The twin carries no
//! debug locations (a `DISubprogram` describes one function, and the locations' scopes lead to
//! the kernel's): the kernel keeps them, and a debug build (`-G`) gets no twins.

use std::collections::HashSet;

use oxide_contract::fast_launch::twin_entry;

use super::ir_functions::{split_blocks, successor_indices, terminator_start};
use super::uniform_bounds::{FAST, UV};

/// `module` with a twin after each kernel named in `kernels` (module docs).
pub fn add(module: &str, kernels: &HashSet<&str>) -> String {
    if kernels.is_empty() {
        return module.to_string();
    }
    let mut out = String::with_capacity(module.len() * 3 / 2);
    let mut lines = module.lines();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        let Some(name) = kernel_name(line).filter(|n| kernels.contains(n)) else { continue };
        let mut body = Vec::new();
        for l in lines.by_ref() {
            out.push_str(l);
            out.push('\n');
            if l == "}" {
                break;
            }
            body.push(l);
        }
        if let Some(twin) = twin(line, name, &body) {
            out.push('\n');
            out.push_str(&twin);
        }
    }
    out
}

/// The name of the kernel a `define ptx_kernel … @name(… {` line opens.
fn kernel_name(line: &str) -> Option<&str> {
    if !line.starts_with("define ptx_kernel ") || !line.trim_end().ends_with('{') {
        return None;
    }
    line.split_once(" @")?.1.split_once('(').map(|(name, _)| name)
}

/// The twin of kernel `name` (its `define` line and body), or `None` when the body does not
/// start with the entry test's branch.
fn twin(define: &str, name: &str, body: &[&str]) -> Option<String> {
    let blocks = split_blocks(body);
    if blocks[0].label.as_deref() != Some(UV) {
        return None;
    }
    let entry = &blocks[0].lines;
    let branch = terminator_start(entry)?;
    let fast = entry[branch].split("label %").nth(1)?.split([',', ' ']).next()?.to_string();
    if !fast.trim_start_matches('"').starts_with(FAST) {
        return None;
    }
    // The blocks reachable with the entry branching to the fast copy only.
    let succs = successor_indices(&blocks);
    let mut reachable = vec![false; blocks.len()];
    let mut stack: Vec<usize> =
        blocks.iter().position(|b| b.label.as_deref() == Some(fast.as_str())).into_iter().collect();
    reachable[0] = true;
    while let Some(b) = stack.pop() {
        if !std::mem::replace(&mut reachable[b], true) {
            stack.extend(succs[b].iter().copied());
        }
    }
    let (head, rest) = define.split_once(&format!("@{name}("))?;
    let mut text = format!("{head}@{}({}\n", twin_entry(name), without_debug_attachment(rest));
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
            text.push_str(&without_debug_location(line));
            text.push('\n');
        }
    }
    text.push_str("}\n");
    Some(text)
}

/// A `define` line's tail without its `!dbg !N` attachment.
fn without_debug_attachment(rest: &str) -> String {
    match rest.find(" !dbg !") {
        Some(i) => {
            let end = rest[i + 7..].find(|c: char| !c.is_ascii_digit()).map_or(rest.len(), |j| i + 7 + j);
            format!("{}{}", &rest[..i], &rest[end..])
        }
        None => rest.to_string(),
    }
}

/// An instruction without its `, !dbg !N` location (and the `!llvm.loop` metadata, whose
/// locations lead to the kernel's subprogram too).
fn without_debug_location(line: &str) -> String {
    let mut out = line.to_string();
    for key in [", !dbg !", ", !llvm.loop !"] {
        while let Some(i) = out.find(key) {
            let start = i + key.len();
            let end = out[start..].find(|c: char| !c.is_ascii_digit()).map_or(out.len(), |j| start + j);
            out.replace_range(i..end, "");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL: &str = "define ptx_kernel void @k(ptr %a, i64 %n) #0 !dbg !7 {\n\
        oxide.uv:\n  %oxide.uv.ok.0 = icmp ule i64 %n, 9\n  \
        br i1 %oxide.uv.ok.0, label %oxide.fast.start, label %start\n\
        start:\n  call void @oxide_bounds_fail(i1 true), !dbg !9\n  ret void\n\
        oxide.fast.start:\n  #dbg_value(i64 %n, !10, !DIExpression(), !9)\n  \
        store i64 %n, ptr %a, align 8, !dbg !9, !noalias !3\n  br label %oxide.fast.exit, !llvm.loop !12\n\
        oxide.fast.exit:\n  ret void, !dbg !9\n}\n";

    #[test]
    fn the_twin_is_the_fast_copy_alone_without_debug_locations() {
        let out = add(KERNEL, &HashSet::from(["k"]));
        assert!(out.starts_with(KERNEL), "{out}");
        let twin = &out[KERNEL.len()..];
        let expected = "\ndefine ptx_kernel void @k__oxide_fast(ptr %a, i64 %n) #0 {\noxide.uv:\n  \
            %oxide.uv.ok.0 = icmp ule i64 %n, 9\n  br label %oxide.fast.start\noxide.fast.start:\n  \
            store i64 %n, ptr %a, align 8, !noalias !3\n  br label %oxide.fast.exit\noxide.fast.exit:\n  ret void\n}\n";
        assert_eq!(twin, expected);
    }

    #[test]
    fn only_the_named_kernels_get_one() {
        assert_eq!(add(KERNEL, &HashSet::from(["other"])), KERNEL);
    }
}
