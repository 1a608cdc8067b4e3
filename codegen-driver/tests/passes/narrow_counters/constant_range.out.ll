define void @k(ptr %p) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %j.n32 = phi i32 [ 0, %start ], [ %next.n32, %loop ]
  %j = zext nneg i32 %j.n32 to i64
  %a = getelementptr float, ptr %p, i64 %j
  store float 0.000000e+00, ptr %a, align 4
  %next.n32 = add nuw nsw i32 %j.n32, 8
  %next = zext nneg i32 %next.n32 to i64
  %done = icmp eq i32 %next.n32, 128
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}
