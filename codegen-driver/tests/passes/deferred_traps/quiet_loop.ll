; A loop without markers, entered once its flag is final: the check moves in front of it (a trap
; in the loop would be a scheduling barrier to ptxas), here before the branch into it.
define void @k(i64 %i, i64 %n) {
entry:
  %oob = icmp uge i64 %i, %n
  tail call void @__oxide_bounds_fail_if(i1 %oob) #2
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

attributes #2 = { nounwind }
