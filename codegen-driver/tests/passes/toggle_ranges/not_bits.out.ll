; Phis that can take other values get nothing (and the module no declaration): starts at 2;
; counts up; xor with 3; 2 - buf; `or disjoint` (poison at 1 | 1); and with a runtime value; a
; value from memory; undef; xor with a counter (not in the set); a phi of constants only, whose
; range LLVM knows already; a phi fed by one that is dropped (@chain: %x goes once %y, a counter,
; has gone).
define void @start_two(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 2, %start ], [ %buf.next, %loop ]
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

define void @add(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %at = shl i64 %buf, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %buf.next = add i64 %buf, 1
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

define void @xor_three(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %at = shl i64 %buf, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %buf.next = xor i64 %buf, 3
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

define void @two_minus(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %at = shl i64 %buf, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %buf.next = sub i64 2, %buf
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

define void @or_disjoint(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %at = shl i64 %buf, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %buf.next = or disjoint i64 %buf, 1
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

define void @and_runtime(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %at = shl i64 %buf, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %buf.next = and i64 %buf, %n
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

define void @load(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %at = shl i64 %buf, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %buf.next = load i64, ptr %p, align 8
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

define void @undef(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ undef, %start ], [ %buf.next, %loop ]
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

define void @counter(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %at = shl i64 %buf, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %buf.next = xor i64 %buf, %i
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

define void @constants(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ 1, %loop ]
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

define void @chain(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %x = phi i64 [ 0, %start ], [ %y, %loop ]
  %y = phi i64 [ 1, %start ], [ %y.next, %loop ]
  %at = shl i64 %x, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %y.next = add i64 %y, 1
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

declare void @__oxide_bounds_fail_if(i1)
