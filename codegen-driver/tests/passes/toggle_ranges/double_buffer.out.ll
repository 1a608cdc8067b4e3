define void @k(ptr %tile, i64 %n) {
start:
  tail call void @__oxide_bounds_fail_if(i1 false)
  br label %loop

loop:                                             ; preds = %loop, %start
  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ]
  %i = phi i64 [ 0, %start ], [ %i.next, %loop ]
  %oxide.bit1 = icmp ult i64 %buf, 2
  call void @llvm.assume(i1 %oxide.bit1)
  %idx = mul i64 %buf, 128
  %oob = icmp uge i64 %idx, 256
  tail call void @__oxide_bounds_fail_if(i1 %oob)
  %buf.next = xor i64 %buf, 1
  %i.next = add i64 %i, 1
  %c = icmp ult i64 %i.next, %n
  br i1 %c, label %loop, label %exit

exit:                                             ; preds = %loop
  ret void
}

declare void @__oxide_bounds_fail_if(i1)
declare void @llvm.assume(i1 noundef)
