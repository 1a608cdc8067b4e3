//! The optimised module as libNVVM takes it for LTOIR: NVVM's data layout, the NVVM IR version,
//! the debug metadata version flag as nvcc's LTOIR has it, and (for full debug information) no
//! narrow multiply-with-overflow intrinsics. The facts are `oxide_contract::link`'s.

use oxide_contract::link::{self, LinkDebug};

/// `optimized` (LLVM IR text) → the NVVM IR that libNVVM compiles to LTOIR with `debug`.
pub fn nvvm_ir(optimized: &str, debug: LinkDebug) -> String {
    let mut out = String::with_capacity(optimized.len() + 256);
    for line in optimized.lines() {
        if line.starts_with("target datalayout = ") {
            out.push_str(&format!("target datalayout = \"{}\"\n", link::NVVM_DATALAYOUT));
        } else if let Some((id, _)) = line.split_once(" = ").filter(|_| line.contains("!\"Debug Info Version\"")) {
            // nvJitLink links our module with nvcc's only when this flag's behaviour is the same.
            out.push_str(&format!("{id} = {}\n", link::NVVM_DEBUG_INFO_VERSION_FLAG));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    if debug == LinkDebug::Full {
        out = widen_narrow_mul_overflow(&out);
    }
    // A metadata id no node of the module uses.
    let next = max_metadata_id(optimized).map_or(0, |n| n + 1);
    let [a, b, c, d] = link::NVVM_IR_VERSION;
    out.push_str(&format!("\n!nvvmir.version = !{{!{next}}}\n!{next} = !{{i32 {a}, i32 {b}, i32 {c}, i32 {d}}}\n"));
    out
}

/// nvJitLink's unoptimised code generation (its `-g`) fails with "unsupported operation" on
/// `llvm.{u,s}mul.with.overflow` of i8, i16 and i32 (i64 and the add/sub forms are fine), which
/// Rust's overflow checks use in debug builds. Each such intrinsic becomes a function of ours
/// that multiplies in i64 and compares the product with its truncation.
fn widen_narrow_mul_overflow(ir: &str) -> String {
    let mut text = ir.to_string();
    let mut definitions = String::new();
    for (op, extend) in [("umul", "zext"), ("smul", "sext")] {
        for ty in ["i8", "i16", "i32"] {
            let intrinsic = format!("@llvm.{op}.with.overflow.{ty}(");
            if !text.contains(&intrinsic) {
                continue;
            }
            let ours = format!("@oxide.{op}.with.overflow.{ty}(");
            text = text
                .lines()
                .filter(|line| !(line.starts_with("declare ") && line.contains(&intrinsic)))
                .map(|line| line.replace(&intrinsic, &ours) + "\n")
                .collect();
            definitions.push_str(&format!(
                "\ndefine internal {{ {ty}, i1 }} {ours}{ty} %a, {ty} %b) alwaysinline {{\n\
                 \x20 %a.wide = {extend} {ty} %a to i64\n\
                 \x20 %b.wide = {extend} {ty} %b to i64\n\
                 \x20 %product = mul i64 %a.wide, %b.wide\n\
                 \x20 %low = trunc i64 %product to {ty}\n\
                 \x20 %back = {extend} {ty} %low to i64\n\
                 \x20 %overflow = icmp ne i64 %back, %product\n\
                 \x20 %r0 = insertvalue {{ {ty}, i1 }} poison, {ty} %low, 0\n\
                 \x20 %r1 = insertvalue {{ {ty}, i1 }} %r0, i1 %overflow, 1\n\
                 \x20 ret {{ {ty}, i1 }} %r1\n}}\n"
            ));
        }
    }
    text + &definitions
}

/// The highest numbered metadata node `!N` of an LLVM IR text.
fn max_metadata_id(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    let mut max = None;
    for (i, _) in text.match_indices('!') {
        let digits: String = bytes[i + 1..].iter().take_while(|b| b.is_ascii_digit()).map(|&b| b as char).collect();
        if let Ok(n) = digits.parse::<u64>() {
            max = max.max(Some(n));
        }
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvvm_ir_has_nvvm_layout_version_and_debug_flag() {
        let ir = "target datalayout = \"e-p6:32:32\"\ntarget triple = \"nvptx64-nvidia-cuda\"\n!7 = !{}\n!12 = !{!7}\n\
                  !3 = !{i32 2, !\"Debug Info Version\", i32 3}\n";
        let out = nvvm_ir(ir, LinkDebug::Lines);
        assert!(out.contains(&format!("target datalayout = \"{}\"", link::NVVM_DATALAYOUT)), "{out}");
        assert!(out.contains("\n!3 = !{i32 1, !\"Debug Info Version\", i32 3}\n"), "{out}");
        assert!(out.ends_with("!nvvmir.version = !{!13}\n!13 = !{i32 2, i32 0, i32 3, i32 2}\n"), "{out}");
        assert!(nvvm_ir("", LinkDebug::None).contains("!nvvmir.version = !{!0}"));
    }

    #[test]
    fn full_debug_widens_narrow_multiplies_with_overflow() {
        let ir = "define i32 @f(i32 %x, i64 %y) {\n\
                  \x20 %r = call { i32, i1 } @llvm.umul.with.overflow.i32(i32 %x, i32 3), !dbg !4\n\
                  \x20 %s = call { i64, i1 } @llvm.smul.with.overflow.i64(i64 %y, i64 3)\n\
                  \x20 ret i32 0\n}\n\
                  declare { i32, i1 } @llvm.umul.with.overflow.i32(i32, i32) #1\n\
                  declare { i64, i1 } @llvm.smul.with.overflow.i64(i64, i64) #1\n";
        let lines = nvvm_ir(ir, LinkDebug::Lines);
        assert!(lines.contains("@llvm.umul.with.overflow.i32(i32 %x"), "{lines}");
        let full = nvvm_ir(ir, LinkDebug::Full);
        assert!(!full.contains("llvm.umul.with.overflow.i32"), "{full}");
        assert!(full.contains("call { i32, i1 } @oxide.umul.with.overflow.i32(i32 %x, i32 3), !dbg !4"), "{full}");
        assert!(full.contains("define internal { i32, i1 } @oxide.umul.with.overflow.i32(i32 %a, i32 %b)"), "{full}");
        assert!(full.contains("%a.wide = zext i32 %a to i64"), "{full}");
        // i64 is left to nvJitLink, which handles it.
        assert!(full.contains("declare { i64, i1 } @llvm.smul.with.overflow.i64(i64, i64) #1"), "{full}");
    }
}
