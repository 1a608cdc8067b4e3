//! The model prints back what it read, and reads what it prints.

use super::*;

const MODULE: &str = r#"; ModuleID = 'x.ll'
source_filename = "llvm-link"
target triple = "nvptx64-nvidia-cuda"

@alloc.3 = private constant [12 x i8] c"src/main.rs\00", align 1

; Function Attrs: nounwind
define ptx_kernel void @k(ptr noalias nonnull readonly align 4 captures(none) %p0, i64 %p1, i32 %p4) #0 !dbg !4 {
start.0:
  %v2.i = alloca [32 x i8], align 8
  tail call void @llvm.experimental.noalias.scope.decl(metadata !10), !dbg !13
  %v119 = tail call noundef range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.z(), !dbg !14
  %c = icmp ult i64 %p1, 7, !dbg !17
  br i1 %c, label %bb2, label %"exit x", !dbg !18

bb2:                                              ; preds = %start.0
  #dbg_value(i64 %p1, !10, !DIExpression(), !9)
  switch i32 %p4, label %"exit x" [
    i32 0, label %bb2
    i32 1, label %"exit x"
  ], !prof !3

"exit x":                                         ; preds = %bb2, %start.0
  %o = phi i1 [ %c, %bb2 ], [ false, %start.0 ]
  call void asm sideeffect "@$0 trap;", "b"(i1 %o) #8
  ret void, !dbg !13
}

declare void @f(i32) local_unnamed_addr #1

attributes #0 = { nounwind "nvvm.maxntid"="256" }
!4 = distinct !DISubprogram(name: "k", unit: !0)
"#;

#[test]
fn a_module_prints_back_byte_for_byte() {
    let m = Module::parse(MODULE);
    assert_eq!(m.to_string(), MODULE);
    let f = m.functions().find(|f| f.name == "k").expect("parsed");
    assert_eq!(f.blocks.len(), 3);
    assert_eq!(f.blocks[2].label.as_deref(), Some("\"exit x\""));
    assert_eq!(f.blocks[1].successors(), vec!["\"exit x\"", "bb2", "\"exit x\""]);
    assert!(matches!(f.blocks[2].insts[0].op(), Op::Phi { .. }));
    assert_eq!(f.value_types()["c"], I1);
    assert!(m.has_function("f") && m.has_function("k") && !m.has_function("g"));
    let cfg = Cfg::new(f);
    assert_eq!(cfg.preds[2], vec![0, 1, 1]);
}

#[test]
fn edits_print_where_they_were_made() {
    let mut m = Module::parse(MODULE);
    let f = m.functions_mut().next().expect("a function");
    let at = f.blocks[0].terminator_index().expect("a branch");
    let x = Inst::assign(
        "oxide.x",
        Op::Bin { op: BinOp::Add, flags: Flags::NONE, ty: I64, a: Value::local("p1"), b: Value::int(1, &I64) },
    );
    f.blocks[0].insts.insert(at, x);
    m.declare("declare void @g()");
    m.declare("declare void @f(i32)");
    let text = m.to_string();
    assert!(text.contains("  %c = icmp ult i64 %p1, 7, !dbg !17\n  %oxide.x = add i64 %p1, 1\n  br i1 %c"), "{text}");
    assert!(text.ends_with("!4 = distinct !DISubprogram(name: \"k\", unit: !0)\ndeclare void @g()\n"), "{text}");
    assert_eq!(Module::parse(&text).to_string(), text);
}

/// Round trip of every `.ll` file in `$OXIDE_IR_DIR` (a manual check over real builds).
#[test]
#[ignore = "reads the folder named by OXIDE_IR_DIR"]
fn real_modules_print_back() {
    let dir = std::env::var("OXIDE_IR_DIR").expect("OXIDE_IR_DIR");
    let mut other: std::collections::BTreeMap<String, usize> = Default::default();
    let (mut total, mut files) = (0usize, 0usize);
    for entry in std::fs::read_dir(dir).expect("a folder") {
        let path = entry.expect("an entry").path();
        let text = std::fs::read_to_string(&path).expect("readable");
        let m = Module::parse(&text);
        assert_eq!(m.to_string(), text, "{}", path.display());
        files += 1;
        for f in m.functions() {
            for inst in f.blocks.iter().flat_map(|b| &b.insts) {
                total += 1;
                if let Op::Other { opcode } = inst.op() {
                    let n = other.entry(opcode.clone()).or_default();
                    if *n == 0 && ["icmp", "phi", "load", "select", "getelementptr"].contains(&opcode.as_str()) {
                        eprintln!("not modelled: {}", inst.text());
                    }
                    *n += 1;
                }
                if let Some(body) = inst.op().render() {
                    let again = Inst::new(inst.result(), inst.op().clone(), inst.attachments());
                    assert_eq!(Inst::parse(again.text()).op(), inst.op(), "{}\n{}", inst.text(), body);
                }
            }
        }
        assert_eq!(
            m.functions().count(),
            text.lines().filter(|l| l.starts_with("define ")).count(),
            "{}",
            path.display()
        );
    }
    eprintln!("{files} files, {total} instructions, not modelled: {other:?}");
}
