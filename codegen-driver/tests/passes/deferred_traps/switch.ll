; A switch with branch weights (`], !prof !0`, oxide-fuzz 3:183) is one terminator: the flag is
; recorded and checked before it.
define void @k(i16 %v, i64 %i, i64 %n) {
start:
  %oob = icmp uge i64 %i, %n
  tail call void @__oxide_bounds_fail_if(i1 %oob)
  switch i16 %v, label %d [
    i16 0, label %a
  ], !prof !0

a:                                                ; preds = %start
  br label %d

d:                                                ; preds = %a, %start
  ret void
}

declare void @__oxide_bounds_fail_if(i1)

!0 = !{!"branch_weights", i32 1, i32 2}
