define void @k(ptr %p, i64 %n) {
start:
  %t = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = tail call noundef range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bw = shl nuw nsw i32 %b, 7
  %0 = add nuw nsw i32 %bw, %t
  %idx = zext nneg i32 %0 to i64
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
  %oxide.rm1.t = call i32 asm "mov.u32 $0, %tid.x;", "=r"()
  %oxide.rm1.b = call i32 asm "mov.u32 $0, %ctaid.x;", "=r"()
  %oxide.rm1.bw = shl nuw nsw i32 %oxide.rm1.b, 7
  %oxide.rm1.0 = add nuw nsw i32 %oxide.rm1.bw, %oxide.rm1.t
  %oxide.rm1.idx = zext nneg i32 %oxide.rm1.0 to i64
  %o = getelementptr float, ptr %p, i64 %oxide.rm1.idx
  store float %acc.lcssa, ptr %o, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
