; One flag per block with markers (not one chain through every guarded block); each check ORs
; them. The flag is recorded before a call of a function (which is checked, since it may not
; return), and the markers of one block merge into one `or` before their record. A call through
; a pointer is a call of a function too; a call of an intrinsic or of inline asm is not.
define void @k(ptr %f, i64 %i, i64 %n, i1 %g) {
entry:
  %oxide.oob.0 = alloca i32, align 4
  store i32 0, ptr %oxide.oob.0, align 4
  %oxide.oob.1 = alloca i32, align 4
  store i32 0, ptr %oxide.oob.1, align 4
  %oob = icmp uge i64 %i, %n
  %oxide.old1 = load i32, ptr %oxide.oob.0, align 4
  %oxide.bit1 = zext i1 %oob to i32
  %oxide.new1 = or i32 %oxide.old1, %oxide.bit1
  store i32 %oxide.new1, ptr %oxide.oob.0, align 4
  br i1 %g, label %then, label %join

then:                                             ; preds = %entry
  %oob2 = icmp ugt i64 %i, 7
  %oob3 = icmp ugt i64 %n, 9
  %oxide.any2 = or i1 %oob2, %oob3
  %oxide.old3 = load i32, ptr %oxide.oob.1, align 4
  %oxide.bit3 = zext i1 %oxide.any2 to i32
  %oxide.new3 = or i32 %oxide.old3, %oxide.bit3
  store i32 %oxide.new3, ptr %oxide.oob.1, align 4
  %oxide.chk4.0 = load i32, ptr %oxide.oob.0, align 4
  %oxide.chk4.1 = load i32, ptr %oxide.oob.1, align 4
  %oxide.any4.1 = or i32 %oxide.chk4.0, %oxide.chk4.1
  %oxide.fail4 = icmp ne i32 %oxide.any4.1, 0
  call void asm sideeffect "@$0 trap;", "b"(i1 %oxide.fail4)
  call void %f()
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  call void asm sideeffect "membar.gl;", ""()
  br label %join

join:                                             ; preds = %then, %entry
  %oxide.chk5.0 = load i32, ptr %oxide.oob.0, align 4
  %oxide.chk5.1 = load i32, ptr %oxide.oob.1, align 4
  %oxide.any5.1 = or i32 %oxide.chk5.0, %oxide.chk5.1
  %oxide.fail5 = icmp ne i32 %oxide.any5.1, 0
  call void asm sideeffect "@$0 trap;", "b"(i1 %oxide.fail5)
  ret void
}

declare void @__oxide_bounds_fail_if(i1)

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
