; A module without markers is left as it is.
define void @k(ptr %a) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %i = phi i64 [ 0, %start ], [ %j, %loop ]
  %j = add i64 %i, 1
  %c = icmp ult i64 %j, 8
  br i1 %c, label %loop, label %exit

exit:                                             ; preds = %loop
  ret void
}
