define void @k(ptr %a, i64 %n) {
entry:
  br label %loop

loop:                                             ; preds = %loop, %entry
  %i = phi i64 [ 0, %entry ], [ %j, %loop ]
  %oob = icmp uge i64 %i, %n
  tail call void @__oxide_bounds_fail_if(i1 %oob) #2
  %j = add i64 %i, 1
  %c = icmp ult i64 %j, 8
  br i1 %c, label %loop, label %exit

exit:                                             ; preds = %loop
  %r = call i32 @vprintf(ptr null, ptr null)
  ret void
}

declare void @__oxide_bounds_fail_if(i1) #2

declare i32 @vprintf(ptr, ptr)

attributes #2 = { nounwind }
