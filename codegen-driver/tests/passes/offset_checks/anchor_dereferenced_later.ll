; `%s2` (offset 512) is computed but its address never loaded: its check must not poison the
; others, which share the check of the largest offset that is dereferenced (256).
define void @k(ptr %x, i64 %len, i64 %i) {
start:
  %ok0 = icmp ult i64 %i, %len
  %s0 = select i1 %ok0, i64 %i, i64 2305843009750564864
  %a0 = getelementptr float, ptr %x, i64 %s0
  %v0 = load float, ptr %a0, align 4
  %i1 = or disjoint i64 %i, 256
  %ok1 = icmp ult i64 %i1, %len
  %s1 = select i1 %ok1, i64 %i1, i64 2305843009750564864
  %a1 = getelementptr float, ptr %x, i64 %s1
  %v1 = load float, ptr %a1, align 4
  %i2 = or disjoint i64 %i, 512
  %ok2 = icmp ult i64 %i2, %len
  %s2 = select i1 %ok2, i64 %i2, i64 2305843009750564864
  ret void
}
