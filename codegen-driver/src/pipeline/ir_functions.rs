//! The textual LLVM IR passes after `opt` not yet on the model (uniform_bounds, toggle_ranges,
//! deferred_traps, flat_index_u32) each rewrite one function body at a time; this walks a
//! module's `define … {` … `}` bodies for them and splits a body into its blocks.
//!
//! The text handled is `opt -S` output: functions from `define … {` to `}`, block labels at the
//! start of a line, instructions indented, successors as `label %name` in terminators.

use std::collections::HashMap;

/// `module` with the body of every function definition replaced by `rewrite(body)`; every other
/// line is kept as it is. A body is the lines between `define … {` and the closing `}`.
pub fn rewrite_bodies(module: &str, mut rewrite: impl FnMut(&[&str]) -> Vec<String>) -> String {
    rewrite_definitions(module, |_, body| rewrite(body))
}

/// As [`rewrite_bodies`], with the `define … {` line of each body.
pub fn rewrite_definitions(module: &str, mut rewrite: impl FnMut(&str, &[&str]) -> Vec<String>) -> String {
    let mut out = String::with_capacity(module.len() + 1024);
    let mut lines = module.lines();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        if line.starts_with("define ") && line.trim_end().ends_with('{') {
            let mut body = Vec::new();
            let mut closed = false;
            for l in lines.by_ref() {
                if l == "}" {
                    closed = true;
                    break;
                }
                body.push(l);
            }
            for l in rewrite(line, &body) {
                out.push_str(&l);
                out.push('\n');
            }
            if closed {
                out.push_str("}\n");
            }
        }
    }
    out
}

pub(super) use super::ir::SREG;

/// A block of the function: its label (None for an unnamed entry) and its lines.
pub(super) struct Block<'a> {
    pub label: Option<String>,
    pub lines: Vec<&'a str>,
}

pub(super) fn split_blocks<'a>(body: &[&'a str]) -> Vec<Block<'a>> {
    let mut blocks: Vec<Block<'a>> = vec![Block { label: None, lines: vec![] }];
    for &l in body {
        if let Some(label) = block_label(l) {
            if blocks.len() == 1 && blocks[0].lines.is_empty() && blocks[0].label.is_none() {
                blocks[0].label = Some(label);
            } else {
                blocks.push(Block { label: Some(label), lines: vec![] });
            }
        } else {
            blocks.last_mut().expect("at least one block").lines.push(l);
        }
    }
    blocks
}

/// `name` of a `name:` line (quotes kept, as `label %name` spells it).
pub(super) fn block_label(line: &str) -> Option<String> {
    if line.starts_with(' ') || line.starts_with(';') || line.is_empty() {
        return None;
    }
    let end = match line.strip_prefix('"') {
        Some(quoted) => quoted.find('"')? + 2,
        None => line.find(':')?,
    };
    (line[end..].starts_with(':')).then(|| line[..end].to_string())
}

/// The `label %x` targets named on `line`.
pub(super) fn successors(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("label %") {
        rest = &rest[i + 7..];
        let end = if let Some(quoted) = rest.strip_prefix('"') {
            quoted.find('"').map_or(rest.len(), |j| j + 2)
        } else {
            rest.find(|c: char| !(c.is_ascii_alphanumeric() || "._$-".contains(c))).unwrap_or(rest.len())
        };
        out.push(rest[..end].to_string());
        rest = &rest[end..];
    }
    out
}

/// Index of the line where the block's terminator starts (a `switch` spans several lines).
pub(super) fn terminator_start(lines: &[&str]) -> Option<usize> {
    let is_code = |l: &&str| !l.trim().is_empty() && !l.trim_start().starts_with(';');
    let last = lines.iter().rposition(is_code)?;
    // The case list ends in `]`, maybe followed by metadata (`], !prof !3`).
    if lines[last].trim_start().starts_with(']') {
        return lines[..last].iter().rposition(|l| l.trim_start().starts_with("switch "));
    }
    Some(last)
}

/// Each block's successors, as block indices.
pub(super) fn successor_indices(blocks: &[Block<'_>]) -> Vec<Vec<usize>> {
    let index: HashMap<&str, usize> =
        blocks.iter().enumerate().filter_map(|(i, b)| b.label.as_deref().map(|l| (l, i))).collect();
    blocks
        .iter()
        .map(|b| {
            let start = terminator_start(&b.lines).unwrap_or(b.lines.len());
            b.lines[start..].iter().flat_map(|l| successors(l)).filter_map(|s| index.get(s.as_str()).copied()).collect()
        })
        .collect()
}

/// The names `%x` in `text`, in order (a lone `%` is not a name).
pub(super) fn value_names(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let start = i;
            i += 1;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || b"._$-".contains(&bytes[i])) {
                i += 1;
            }
            if i > start + 1 {
                out.push(&text[start..i]);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Whether `v` is one value's name (`%x`), not an expression or a constant.
pub(super) fn is_plain_name(v: &str) -> bool {
    v.starts_with('%') && v.len() > 1 && v[1..].bytes().all(|b| b.is_ascii_alphanumeric() || b"._$-".contains(&b))
}

/// `text` without trailing `, !name !n` metadata attachments.
pub(super) fn strip_metadata(text: &str) -> &str {
    text.find(", !").map_or(text, |i| &text[..i]).trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bodies_are_rewritten() {
        let ir = "declare void @f()\ndefine void @g() {\n  ret void\n}\n@x = global i32 0\n";
        let upper = rewrite_bodies(ir, |body| body.iter().map(|l| l.to_uppercase()).collect());
        assert_eq!(upper, "declare void @f()\ndefine void @g() {\n  RET VOID\n}\n@x = global i32 0\n");
    }

    #[test]
    fn labels_and_successors() {
        assert_eq!(block_label("bb7.16.i:      ; preds = %start"), Some("bb7.16.i".into()));
        assert_eq!(block_label("12:"), Some("12".into()));
        assert_eq!(block_label("  %x = add i32 1, 2"), None);
        assert_eq!(block_label("\"a b\":"), Some("\"a b\"".into()));
        assert_eq!(successors("  br i1 %c, label %a.1, label %\"x y\""), vec!["a.1", "\"x y\""]);
        assert_eq!(
            terminator_start(&["  %x = add i32 1, 2", "  switch i32 %x, label %d [", "    i32 0, label %a", "  ]"]),
            Some(1)
        );
        // oxide-fuzz 3:183: a switch with branch weights ends in `], !prof !3`.
        assert_eq!(terminator_start(&["  switch i16 %v, label %d [", "    i16 0, label %a", "  ], !prof !3"]), Some(0));
    }
}
