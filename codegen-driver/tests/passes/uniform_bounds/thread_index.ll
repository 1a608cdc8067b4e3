define ptx_kernel void @k(ptr %x, i64 %len, i64 %n, i64 %w, i64 %h) #3 {
start:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext i32 %t to i64
  %oob0 = icmp uge i64 %i, %len
  tail call void @__oxide_bounds_fail_if(i1 %oob0)
  %s0 = select i1 %oob0, i64 2305843009750564864, i64 %i
  %a0 = getelementptr float, ptr %x, i64 %s0
  %v0 = load float, ptr %a0, align 4
  ret void
}

declare void @__oxide_bounds_fail_if(i1)

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

attributes #3 = { "nvvm.maxntid"="256,1,1" }
