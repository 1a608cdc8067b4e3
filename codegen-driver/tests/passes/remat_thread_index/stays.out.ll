; Values left alone: one used in the loop too (live there anyway), one built from a load (not
; the same for the whole thread), one from the lane id (not in the list), and one in a function
; without a loop (nothing to gain).
define void @used_in_loop(ptr %p, i64 %n) {
start:
  %t = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = tail call noundef range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bw = shl nuw nsw i32 %b, 7
  %0 = add nuw nsw i32 %bw, %t
  %idx = zext nneg i32 %0 to i64
  br label %loop

loop:                                             ; preds = %loop, %start
  %j = phi i64 [ 0, %start ], [ %j.next, %loop ]
  %q = getelementptr float, ptr %p, i64 %idx
  store float 0.000000e+00, ptr %q, align 4
  %j.next = add nuw i64 %j, 1
  %done = icmp eq i64 %j.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  %o = getelementptr float, ptr %p, i64 %idx
  store float 1.000000e+00, ptr %o, align 4
  ret void
}

define void @loaded(ptr %p, i64 %n) {
start:
  %t = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ld = load i32, ptr %p, align 4
  %0 = add nuw nsw i32 %ld, %t
  %idx = zext nneg i32 %0 to i64
  br label %loop

loop:                                             ; preds = %loop, %start
  %j = phi i64 [ 0, %start ], [ %j.next, %loop ]
  %j.next = add nuw i64 %j, 1
  %done = icmp eq i64 %j.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  %o = getelementptr float, ptr %p, i64 %idx
  store float 1.000000e+00, ptr %o, align 4
  ret void
}

define void @lane(ptr %p, i64 %n) {
start:
  %l = tail call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %b = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %0 = add nuw nsw i32 %b, %l
  %idx = zext nneg i32 %0 to i64
  br label %loop

loop:                                             ; preds = %loop, %start
  %j = phi i64 [ 0, %start ], [ %j.next, %loop ]
  %j.next = add nuw i64 %j, 1
  %done = icmp eq i64 %j.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  %o = getelementptr float, ptr %p, i64 %idx
  store float 1.000000e+00, ptr %o, align 4
  ret void
}

define void @no_loop(ptr %p) {
start:
  %t = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bw = shl nuw nsw i32 %b, 7
  %0 = add nuw nsw i32 %bw, %t
  %idx = zext nneg i32 %0 to i64
  br label %exit

exit:                                             ; preds = %start
  %o = getelementptr float, ptr %p, i64 %idx
  store float 1.000000e+00, ptr %o, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()

declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
