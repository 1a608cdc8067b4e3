; `(i | 256) | b` and `i | b`: the same index plus 256 (layernorm's `y[base + t + 256 * j]`);
; the terms are summed in the order of their names.
define void @k(ptr %x, i64 %len, i64 %i, i64 %b) {
start:
  %ib = or disjoint i64 %i, %b
  %ok0 = icmp ult i64 %ib, %len
  %oxide.sum1.1 = add nuw i64 %b, %i
  %oxide.last1 = add nuw i64 %oxide.sum1.1, 256
  %oxide.inb1 = icmp ult i64 %oxide.last1, %len
  %oxide.base1 = select i1 %oxide.inb1, i64 %oxide.sum1.1, i64 2305843009750564864
  %s0 = add i64 %oxide.base1, 0
  %a0 = getelementptr float, ptr %x, i64 %s0
  store float 0.000000e+00, ptr %a0, align 4
  %t1 = or disjoint i64 %i, 256
  %u1 = or disjoint i64 %t1, %b
  %ok1 = icmp ult i64 %u1, %len
  %s1 = add i64 %oxide.base1, 256
  %a1 = getelementptr float, ptr %x, i64 %s1
  store float 0.000000e+00, ptr %a1, align 4
  ret void
}
