; A loop that stays while `next != end` (step 1, end 64), with two counters in one header: the
; second (`%k`, stepping by 2 from 16) does not decide the exit and stays 64-bit.
define void @k(ptr %p) !dbg !4 {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %j = phi i64 [ 0, %start ], [ %next, %loop ]
  %k = phi i64 [ 16, %start ], [ %k.next, %loop ]
  %a = getelementptr float, ptr %p, i64 %j
  store float 0.000000e+00, ptr %a, align 4
  %b = getelementptr float, ptr %p, i64 %k
  store float 1.000000e+00, ptr %b, align 4
  %k.next = add nuw nsw i64 %k, 2
  %next = add nuw nsw i64 %j, 1, !dbg !3
  %more = icmp ne i64 %next, 64
  br i1 %more, label %loop, label %exit

exit:                                             ; preds = %loop
  ret void
}

!llvm.module.flags = !{!0}
!llvm.dbg.cu = !{!1}
!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = distinct !DICompileUnit(language: DW_LANG_Rust, file: !2, producer: "oxide", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
!2 = !DIFile(filename: "k.rs", directory: "/")
!3 = !DILocation(line: 3, column: 5, scope: !4)
!4 = distinct !DISubprogram(name: "k", scope: !2, file: !2, line: 1, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !1)
