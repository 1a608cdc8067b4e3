; The checks spelled the other way round: `select(out of bounds, poison, index)`, and the
; compares with their operands swapped (`len > i`, `len <= i1`).
define void @k(ptr %x, i64 %len, i64 %i) {
start:
  %ok0 = icmp ugt i64 %len, %i
  %oxide.last1 = add nuw i64 %i, 256
  %oxide.inb1 = icmp ult i64 %oxide.last1, %len
  %oxide.base1 = select i1 %oxide.inb1, i64 %i, i64 2305843009750564864
  %s0 = add i64 %oxide.base1, 0
  %a0 = getelementptr float, ptr %x, i64 %s0
  %v0 = load float, ptr %a0, align 4
  %i1 = add nuw i64 %i, 256
  %oob1 = icmp ule i64 %len, %i1
  %s1 = add i64 %oxide.base1, 256
  %a1 = getelementptr float, ptr %x, i64 %s1
  %v1 = load float, ptr %a1, align 4
  ret void
}
