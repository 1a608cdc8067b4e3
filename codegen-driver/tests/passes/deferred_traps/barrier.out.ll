; As quiet_loop, with a barrier after the marker: the check goes before the barrier, not between
; it and the loop.
define void @k(i64 %i, i64 %n) {
entry:
  %oxide.oob.0 = alloca i32, align 4
  store i32 0, ptr %oxide.oob.0, align 4
  %oob = icmp uge i64 %i, %n
  %oxide.old1 = load i32, ptr %oxide.oob.0, align 4
  %oxide.bit1 = zext i1 %oob to i32
  %oxide.new1 = or i32 %oxide.old1, %oxide.bit1
  store i32 %oxide.new1, ptr %oxide.oob.0, align 4
  %oxide.chk2.0 = load i32, ptr %oxide.oob.0, align 4
  %oxide.fail2 = icmp ne i32 %oxide.chk2.0, 0
  call void asm sideeffect "@$0 trap;", "b"(i1 %oxide.fail2)
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  br label %inner

inner:                                            ; preds = %inner, %entry
  %j = phi i64 [ 0, %entry ], [ %k, %inner ]
  %k = add i64 %j, 1
  %c = icmp ult i64 %k, 8
  br i1 %c, label %inner, label %exit

exit:                                             ; preds = %inner
  %oxide.chk3.0 = load i32, ptr %oxide.oob.0, align 4
  %oxide.fail3 = icmp ne i32 %oxide.chk3.0, 0
  call void asm sideeffect "@$0 trap;", "b"(i1 %oxide.fail3)
  ret void
}

declare void @__oxide_bounds_fail_if(i1) #2

declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)

attributes #2 = { nounwind }
