; A check on an `i32` parameter under a guard on an `i64` length (NVIDIA's array_index example,
; `arr[index as usize]` inside `if let Some(o) = out.get_mut(idx)`): every value of the entry
; test is read at its own type (the guard's length is never read as an `i32`).
define ptx_kernel void @test_runtime_index_write(i32 %p0, i32 %p1, ptr %p2, i64 %p3) {
start:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %idx = zext i32 %t to i64
  %in = icmp ult i64 %idx, %p3
  br i1 %in, label %then, label %exit

then:                                             ; preds = %start
  %oob = icmp ugt i32 %p0, 3
  tail call void @__oxide_bounds_fail_if(i1 %oob)
  %q = getelementptr i32, ptr %p2, i64 %idx
  store i32 %p1, ptr %q, align 4
  br label %exit

exit:                                             ; preds = %then, %start
  ret void
}

declare void @__oxide_bounds_fail_if(i1)

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
