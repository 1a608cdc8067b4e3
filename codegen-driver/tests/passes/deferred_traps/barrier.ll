; As quiet_loop, with a barrier after the marker: the check goes before the barrier, not between
; it and the loop.
define void @k(i64 %i, i64 %n) {
entry:
  %oob = icmp uge i64 %i, %n
  tail call void @__oxide_bounds_fail_if(i1 %oob) #2
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  br label %inner

inner:                                            ; preds = %inner, %entry
  %j = phi i64 [ 0, %entry ], [ %k, %inner ]
  %k = add i64 %j, 1
  %c = icmp ult i64 %k, 8
  br i1 %c, label %inner, label %exit

exit:                                             ; preds = %inner
  ret void
}

declare void @__oxide_bounds_fail_if(i1) #2

declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)

attributes #2 = { nounwind }
