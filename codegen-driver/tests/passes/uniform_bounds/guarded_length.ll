define ptx_kernel void @k(ptr %x, i64 %len, i64 %n, i64 %w, i64 %h) {
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
}

declare void @__oxide_bounds_fail_if(i1)
