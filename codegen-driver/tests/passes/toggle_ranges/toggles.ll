; Loop values that only hold 0 or 1 get `llvm.assume(v < 2)` after their block's phis: toggles by
; xor and `1 - b` (flags or not), from 0 or 1; `and` with a constant and `or` of bit values; through casts and through a phi that forwards one
; (@cast); two phis that feed each other (@pair: the greatest fixed point keeps both). The
; counter %i gets nothing, and the assume is declared once (it was already).
define void @xor(ptr %p, i64 %n) {
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

define void @xor_swapped(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %at = shl i64 %buf, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %buf.next = xor i64 1, %buf
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

define void @sub(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %at = shl i64 %buf, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %buf.next = sub i64 1, %buf
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

define void @sub_flags(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %at = shl i64 %buf, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %buf.next = sub nuw nsw i64 1, %buf
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

define void @from_one(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 1, %start ], [ %buf.next, %loop ]
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

define void @and_constant(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %at = shl i64 %buf, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %t = xor i64 %buf, 1
  %buf.next = and i64 %t, 1
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

define void @or(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %at = shl i64 %buf, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %t = xor i64 %buf, 1
  %buf.next = or i64 %t, 0
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

define void @cast(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %at = shl i64 %buf, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %t0 = trunc nuw i64 %buf to i32
  %t1 = xor i32 %t0, 1
  %buf.next = zext i32 %t1 to i64
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  %last = phi i64 [ %buf.next, %loop ]
  ret void
}

define void @pair(ptr %p, i64 %n) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %x = phi i64 [ 0, %start ], [ %y, %loop ]
  %y = phi i64 [ 1, %start ], [ %x.not, %loop ]
  %at = shl i64 %y, 10
  %a = getelementptr float, ptr %p, i64 %at
  store float 0.000000e+00, ptr %a, align 4
  %x.not = xor i64 %x, 1
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  ret void
}

declare void @__oxide_bounds_fail_if(i1)

declare void @llvm.assume(i1 noundef)
