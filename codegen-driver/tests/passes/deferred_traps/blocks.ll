; One flag per block with markers (not one chain through every guarded block); each check ORs
; them. The flag is recorded before a call of a function (which is checked, since it may not
; return), and the markers of one block merge into one `or` before their record. A call through
; a pointer is a call of a function too; a call of an intrinsic or of inline asm is not.
define void @k(ptr %f, i64 %i, i64 %n, i1 %g) {
entry:
  %oob = icmp uge i64 %i, %n
  tail call void @__oxide_bounds_fail_if(i1 %oob)
  br i1 %g, label %then, label %join

then:                                             ; preds = %entry
  %oob2 = icmp ugt i64 %i, 7
  %oob3 = icmp ugt i64 %n, 9
  tail call void @__oxide_bounds_fail_if(i1 %oob2)
  tail call void @__oxide_bounds_fail_if(i1 %oob3)
  call void %f()
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  call void asm sideeffect "membar.gl;", ""()
  br label %join

join:                                             ; preds = %then, %entry
  ret void
}

declare void @__oxide_bounds_fail_if(i1)

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
