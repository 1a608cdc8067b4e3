//! The textual LLVM IR passes after `opt` (toggle_ranges, deferred_traps, offset_checks,
//! narrow_counters, remat_thread_index) each rewrite one function body at a time; this walks a
//! module's `define … {` … `}` bodies for them.

/// `module` with the body of every function definition replaced by `rewrite(body)`; every other
/// line is kept as it is. A body is the lines between `define … {` and the closing `}`.
pub fn rewrite_bodies(module: &str, mut rewrite: impl FnMut(&[&str]) -> Vec<String>) -> String {
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
            for l in rewrite(&body) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bodies_are_rewritten() {
        let ir = "declare void @f()\ndefine void @g() {\n  ret void\n}\n@x = global i32 0\n";
        let upper = rewrite_bodies(ir, |body| body.iter().map(|l| l.to_uppercase()).collect());
        assert_eq!(upper, "declare void @f()\ndefine void @g() {\n  RET VOID\n}\n@x = global i32 0\n");
    }
}
