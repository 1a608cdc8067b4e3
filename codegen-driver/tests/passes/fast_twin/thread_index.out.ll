; passes: uniform_bounds fast_twin
define ptx_kernel void @k(ptr %x, i64 %len, i64 %n, i64 %w, i64 %h) {
oxide.uv:
  %oxide.uv.tid_x = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %start
start:
  %t = add i32 %oxide.uv.tid_x, 0
  %i = zext i32 %t to i64
  %oob0 = icmp uge i64 %i, %len
  tail call void @__oxide_bounds_fail_if(i1 %oob0)
  %s0 = select i1 %oob0, i64 2305843009750564864, i64 %i
  %a0 = getelementptr float, ptr %x, i64 %s0
  %v0 = load float, ptr %a0, align 4
  ret void
}

define ptx_kernel void @k__oxide_fast_e50d7945c379129d(ptr %x, i64 %len, i64 %n, i64 %w, i64 %h) {
oxide.uv:
  %oxide.uv.1 = call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %oxide.uv.2 = zext i32 %oxide.uv.1 to i64
  %oxide.uv.3 = add i64 %oxide.uv.2, -1
  %oxide.uv.4 = icmp ule i64 %oxide.uv.2, %len
  %oxide.uv.5 = and i1 true, %oxide.uv.4
  %oxide.uv.tid_x = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %oxide.fast.start
oxide.fast.start:
  %oxide.fast.t = add i32 %oxide.uv.tid_x, 0
  %oxide.fast.i = zext i32 %oxide.fast.t to i64
  %oxide.fast.oob0 = and i1 true, false
  tail call void @__oxide_bounds_fail_if(i1 false)
  %oxide.fast.s0 = select i1 %oxide.fast.oob0, i64 2305843009750564864, i64 %oxide.fast.i
  %oxide.fast.a0 = getelementptr float, ptr %x, i64 %oxide.fast.s0
  %oxide.fast.v0 = load float, ptr %oxide.fast.a0, align 4
  ret void
}

declare void @__oxide_bounds_fail_if(i1)

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
