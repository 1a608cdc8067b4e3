; Selects this pass must not touch: a user's select (not the poison constant), accesses of a
; stack slot (a poisoned stack address might not fault), an element size other than the
; poison's, and accesses that are not plain (volatile).
define void @user_select(ptr %x, i64 %len, i64 %i) {
start:
  %ok0 = icmp ult i64 %i, %len
  %s0 = select i1 %ok0, i64 %i, i64 7
  %a0 = getelementptr float, ptr %x, i64 %s0
  %v0 = load float, ptr %a0, align 4
  %i1 = or disjoint i64 %i, 256
  %ok1 = icmp ult i64 %i1, %len
  %s1 = select i1 %ok1, i64 %i1, i64 7
  %a1 = getelementptr float, ptr %x, i64 %s1
  %v1 = load float, ptr %a1, align 4
  ret void
}

define void @stack(i64 %len, i64 %i) {
start:
  %x = alloca [1024 x float], align 4
  %ok0 = icmp ult i64 %i, %len
  %s0 = select i1 %ok0, i64 %i, i64 2305843009750564864
  %a0 = getelementptr float, ptr %x, i64 %s0
  %v0 = load float, ptr %a0, align 4
  %i1 = or disjoint i64 %i, 256
  %ok1 = icmp ult i64 %i1, %len
  %s1 = select i1 %ok1, i64 %i1, i64 2305843009750564864
  %a1 = getelementptr float, ptr %x, i64 %s1
  %v1 = load float, ptr %a1, align 4
  ret void
}

define void @wider_element(ptr %x, i64 %len, i64 %i) {
start:
  %ok0 = icmp ult i64 %i, %len
  %s0 = select i1 %ok0, i64 %i, i64 2305843009750564864
  %a0 = getelementptr double, ptr %x, i64 %s0
  %v0 = load double, ptr %a0, align 8
  %i1 = or disjoint i64 %i, 256
  %ok1 = icmp ult i64 %i1, %len
  %s1 = select i1 %ok1, i64 %i1, i64 2305843009750564864
  %a1 = getelementptr double, ptr %x, i64 %s1
  %v1 = load double, ptr %a1, align 8
  ret void
}

define void @volatile(ptr %x, i64 %len, i64 %i) {
start:
  %ok0 = icmp ult i64 %i, %len
  %s0 = select i1 %ok0, i64 %i, i64 2305843009750564864
  %a0 = getelementptr float, ptr %x, i64 %s0
  %v0 = load volatile float, ptr %a0, align 4
  %i1 = or disjoint i64 %i, 256
  %ok1 = icmp ult i64 %i1, %len
  %s1 = select i1 %ok1, i64 %i1, i64 2305843009750564864
  %a1 = getelementptr float, ptr %x, i64 %s1
  store volatile float 0.000000e+00, ptr %a1, align 4
  ret void
}
