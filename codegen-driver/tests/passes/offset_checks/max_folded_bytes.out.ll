; Offsets are folded up to MAX_FOLDED_BYTES (2^24 bytes, 2^22 floats): the access at 2^22 keeps
; its own check, the two below it share the check of 4194303.
define void @k(ptr %x, i64 %len, i64 %i) {
start:
  %ok0 = icmp ult i64 %i, %len
  %oxide.last1 = add nuw i64 %i, 4194303
  %oxide.inb1 = icmp ult i64 %oxide.last1, %len
  %oxide.base1 = select i1 %oxide.inb1, i64 %i, i64 2305843009750564864
  %s0 = add i64 %oxide.base1, 0
  %a0 = getelementptr float, ptr %x, i64 %s0
  %v0 = load float, ptr %a0, align 4
  %i1 = add nuw i64 %i, 4194303
  %ok1 = icmp ult i64 %i1, %len
  %s1 = add i64 %oxide.base1, 4194303
  %a1 = getelementptr float, ptr %x, i64 %s1
  %v1 = load float, ptr %a1, align 4
  %i2 = add nuw i64 %i, 4194304
  %ok2 = icmp ult i64 %i2, %len
  %s2 = select i1 %ok2, i64 %i2, i64 2305843009750564864
  %a2 = getelementptr float, ptr %x, i64 %s2
  %v2 = load float, ptr %a2, align 4
  ret void
}
