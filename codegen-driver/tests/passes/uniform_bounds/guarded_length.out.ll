define ptx_kernel void @k(ptr %x, i64 %len, i64 %n, i64 %w, i64 %h) {
oxide.uv:
  %oxide.uv.1 = add i64 %n, -1
  %oxide.uv.2 = icmp ule i64 %n, %len
  %oxide.uv.3 = and i1 true, %oxide.uv.2
  br i1 %oxide.uv.3, label %oxide.fast.start, label %start
start:
  %i = load i64, ptr %x, align 8
  %in = icmp ult i64 %i, %n
  br i1 %in, label %then, label %exit

then:
  %oob0 = icmp uge i64 %i, %len
  tail call void @__oxide_bounds_fail_if(i1 %oob0)
  %s0 = select i1 %oob0, i64 2305843009750564864, i64 %i
  %a0 = getelementptr float, ptr %x, i64 %s0
  %v0 = load float, ptr %a0, align 4
  br label %exit

exit:
  ret void

oxide.fast.start:
  %oxide.fast.i = load i64, ptr %x, align 8
  %oxide.fast.in = icmp ult i64 %oxide.fast.i, %n
  br i1 %oxide.fast.in, label %oxide.fast.then, label %oxide.fast.exit

oxide.fast.then:
  %oxide.fast.oob0 = and i1 true, false
  tail call void @__oxide_bounds_fail_if(i1 false)
  %oxide.fast.s0 = select i1 %oxide.fast.oob0, i64 2305843009750564864, i64 %oxide.fast.i
  %oxide.fast.a0 = getelementptr float, ptr %x, i64 %oxide.fast.s0
  %oxide.fast.v0 = load float, ptr %oxide.fast.a0, align 4
  br label %oxide.fast.exit

oxide.fast.exit:
  ret void
}

declare void @__oxide_bounds_fail_if(i1)
