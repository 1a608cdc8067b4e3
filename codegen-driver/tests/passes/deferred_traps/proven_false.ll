; A marker that opt proved to pass (`i1 false`) records nothing: the loop that holds it counts as
; a loop without markers, checked before it is entered; and a function whose markers are all
; proven still checks (on `icmp ne i32 0, 0`, which the next opt folds to a dead trap).
define void @k(i64 %i, i64 %n) {
entry:
  %oob = icmp uge i64 %i, %n
  tail call void @__oxide_bounds_fail_if(i1 %oob) #2
  br label %inner

inner:                                            ; preds = %inner, %entry
  %j = phi i64 [ 0, %entry ], [ %k, %inner ]
  tail call void @__oxide_bounds_fail_if(i1 false) #2
  %k = add i64 %j, 1
  %c = icmp ult i64 %k, 8
  br i1 %c, label %inner, label %exit

exit:                                             ; preds = %inner
  ret void
}

define void @proven() {
start:
  tail call void @__oxide_bounds_fail_if(i1 false) #2
  ret void
}

declare void @__oxide_bounds_fail_if(i1) #2

attributes #2 = { nounwind }
