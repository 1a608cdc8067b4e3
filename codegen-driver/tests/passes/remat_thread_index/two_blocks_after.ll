; Used in two blocks after the loop: each gets its own copy (numbered on through the module),
; after its phis, without the originals' debug locations; a parameter stays a leaf, and the
; use before the loop keeps the original.
define void @k(ptr %p, i64 %n, i64 %base) !dbg !4 {
start:
  %t = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !3
  %w = zext nneg i32 %t to i64, !dbg !3
  %idx = add nuw i64 %w, %base, !dbg !3
  %a = getelementptr float, ptr %p, i64 %idx
  %v = load float, ptr %a, align 4
  br label %loop

loop:                                             ; preds = %loop, %start
  %j = phi i64 [ 0, %start ], [ %j.next, %loop ]
  %acc = phi float [ %v, %start ], [ %acc.next, %loop ]
  %acc.next = fadd float %acc, 1.000000e+00
  %j.next = add nuw i64 %j, 1
  %done = icmp eq i64 %j.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  %acc.lcssa = phi float [ %acc.next, %loop ]
  %neg = fcmp olt float %acc.lcssa, 0.000000e+00
  br i1 %neg, label %low, label %high

low:                                              ; preds = %exit
  %o = getelementptr float, ptr %p, i64 %idx
  store float %acc.lcssa, ptr %o, align 4
  ret void

high:                                             ; preds = %exit
  %h = getelementptr float, ptr %p, i64 %idx
  store float 0.000000e+00, ptr %h, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

!llvm.module.flags = !{!0}
!llvm.dbg.cu = !{!1}
!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = distinct !DICompileUnit(language: DW_LANG_Rust, file: !2, producer: "oxide", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
!2 = !DIFile(filename: "k.rs", directory: "/")
!3 = !DILocation(line: 3, column: 5, scope: !4)
!4 = distinct !DISubprogram(name: "k", scope: !2, file: !2, line: 1, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !1)
