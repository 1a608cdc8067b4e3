; A switch with branch weights (`], !prof !0`, oxide-fuzz 3:183) is one terminator: the flag is
; recorded and checked before it.
define void @k(i16 %v, i64 %i, i64 %n) {
start:
  %oxide.oob.0 = alloca i32, align 4
  store i32 0, ptr %oxide.oob.0, align 4
  %oob = icmp uge i64 %i, %n
  %oxide.old1 = load i32, ptr %oxide.oob.0, align 4
  %oxide.bit1 = zext i1 %oob to i32
  %oxide.new1 = or i32 %oxide.old1, %oxide.bit1
  store i32 %oxide.new1, ptr %oxide.oob.0, align 4
  switch i16 %v, label %d [
    i16 0, label %a
  ], !prof !0

a:                                                ; preds = %start
  br label %d

d:                                                ; preds = %a, %start
  %oxide.chk2.0 = load i32, ptr %oxide.oob.0, align 4
  %oxide.fail2 = icmp ne i32 %oxide.chk2.0, 0
  call void asm sideeffect "@$0 trap;", "b"(i1 %oxide.fail2)
  ret void
}

declare void @__oxide_bounds_fail_if(i1)

!0 = !{!"branch_weights", i32 1, i32 2}
