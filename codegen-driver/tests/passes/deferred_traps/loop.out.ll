define void @k(ptr %a, i64 %n) {
entry:
  %oxide.oob.1 = alloca i32, align 4
  store i32 0, ptr %oxide.oob.1, align 4
  br label %loop

loop:                                             ; preds = %loop, %entry
  %i = phi i64 [ 0, %entry ], [ %j, %loop ]
  %oob = icmp uge i64 %i, %n
  %j = add i64 %i, 1
  %c = icmp ult i64 %j, 8
  %oxide.old1 = load i32, ptr %oxide.oob.1, align 4
  %oxide.bit1 = zext i1 %oob to i32
  %oxide.new1 = or i32 %oxide.old1, %oxide.bit1
  store i32 %oxide.new1, ptr %oxide.oob.1, align 4
  %oxide.chk2.0 = load i32, ptr %oxide.oob.1, align 4
  %oxide.fail2 = icmp ne i32 %oxide.chk2.0, 0
  call void asm sideeffect "@$0 trap;", "b"(i1 %oxide.fail2)
  br i1 %c, label %loop, label %exit

exit:                                             ; preds = %loop
  %oxide.chk3.0 = load i32, ptr %oxide.oob.1, align 4
  %oxide.fail3 = icmp ne i32 %oxide.chk3.0, 0
  call void asm sideeffect "@$0 trap;", "b"(i1 %oxide.fail3)
  %r = call i32 @vprintf(ptr null, ptr null)
  %oxide.chk4.0 = load i32, ptr %oxide.oob.1, align 4
  %oxide.fail4 = icmp ne i32 %oxide.chk4.0, 0
  call void asm sideeffect "@$0 trap;", "b"(i1 %oxide.fail4)
  ret void
}

declare void @__oxide_bounds_fail_if(i1) #2

declare i32 @vprintf(ptr, ptr)

attributes #2 = { nounwind }
