; Without deferred bounds checks in the module the pass does nothing, even for a toggle.
define void @k(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %at = shl i64 %buf, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %buf.next = xor i64 %buf, 1
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}
