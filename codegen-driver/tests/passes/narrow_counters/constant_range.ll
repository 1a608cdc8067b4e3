define void @k(ptr %p) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %j = phi i64 [ 0, %start ], [ %next, %loop ]
  %a = getelementptr float, ptr %p, i64 %j
  store float 0.000000e+00, ptr %a, align 4
  %next = add nuw nsw i64 %j, 8
  %done = icmp eq i64 %next, 128
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}
