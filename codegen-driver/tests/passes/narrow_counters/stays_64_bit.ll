; Counters that might leave the range stay 64-bit: an end past `i32::MAX`, an end the step does
; not reach (3 does not divide 128), an exit on the wrong side of the compare (`eq` staying on
; true), and an end that is not a constant.
define void @end_past_i32(ptr %p) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %j = phi i64 [ 0, %start ], [ %next, %loop ]
  %a = getelementptr float, ptr %p, i64 %j
  store float 0.000000e+00, ptr %a, align 4
  %next = add nuw nsw i64 %j, 8
  %done = icmp eq i64 %next, 2147483648
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

define void @step_misses_end(ptr %p) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %j = phi i64 [ 0, %start ], [ %next, %loop ]
  %a = getelementptr float, ptr %p, i64 %j
  store float 0.000000e+00, ptr %a, align 4
  %next = add nuw nsw i64 %j, 3
  %done = icmp eq i64 %next, 128
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

define void @wrong_side(ptr %p) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %j = phi i64 [ 0, %start ], [ %next, %loop ]
  %a = getelementptr float, ptr %p, i64 %j
  store float 0.000000e+00, ptr %a, align 4
  %next = add nuw nsw i64 %j, 8
  %done = icmp eq i64 %next, 128
  br i1 %done, label %loop, label %exit

exit:                                             ; preds = %loop
  ret void
}

define void @runtime_end(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %j = phi i64 [ 0, %start ], [ %next, %loop ]
  %a = getelementptr float, ptr %p, i64 %j
  store float 0.000000e+00, ptr %a, align 4
  %next = add nuw nsw i64 %j, 8
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}
