; A check on an `i32` parameter under a guard on an `i64` length (NVIDIA's array_index example,
; `arr[index as usize]` inside `if let Some(o) = out.get_mut(idx)`): every value of the entry
; test is read at its own type (the guard's length is never read as an `i32`).
define ptx_kernel void @test_runtime_index_write(i32 %p0, i32 %p1, ptr %p2, i64 %p3) {
oxide.uv:
  %oxide.uv.1 = zext i32 %p0 to i64
  %oxide.uv.2 = icmp ule i64 %oxide.uv.1, 3
  %oxide.uv.3 = and i1 true, %oxide.uv.2
  %oxide.uv.tid_x = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br i1 %oxide.uv.3, label %oxide.fast.start, label %start
start:
  %t = add i32 %oxide.uv.tid_x, 0
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

oxide.fast.start:
  %oxide.fast.t = add i32 %oxide.uv.tid_x, 0
  %oxide.fast.idx = zext i32 %oxide.fast.t to i64
  %oxide.fast.in = icmp ult i64 %oxide.fast.idx, %p3
  br i1 %oxide.fast.in, label %oxide.fast.then, label %oxide.fast.exit

oxide.fast.then:
  %oxide.fast.oob = and i1 true, false
  tail call void @__oxide_bounds_fail_if(i1 false)
  %oxide.fast.q = getelementptr i32, ptr %p2, i64 %oxide.fast.idx
  store i32 %p1, ptr %oxide.fast.q, align 4
  br label %oxide.fast.exit

oxide.fast.exit:
  ret void
}

declare void @__oxide_bounds_fail_if(i1)

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
