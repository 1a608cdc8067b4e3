; A marker whose block accesses memory through an address that a select on its condition
; poisoned needs no flag: the access faults if the check failed. The second marker has no such
; access and keeps its flag. The same through a stack slot (@stack) keeps both flags: a poisoned
; local address need not fault. A function without markers (@plain) is left alone.
define void @k(ptr %a, i64 %i, i64 %n) {
entry:
  %oxide.oob.1 = alloca i32, align 4
  store i32 0, ptr %oxide.oob.1, align 4
  %oob = icmp uge i64 %i, %n
  %oob2 = icmp ugt i64 %i, 7
  %j = select i1 %oob, i64 2305843009750564864, i64 %i
  %p = getelementptr float, ptr %a, i64 %j
  br label %body

body:                                             ; preds = %entry
  %v = load float, ptr %p, align 4
  %oxide.old1 = load i32, ptr %oxide.oob.1, align 4
  %oxide.bit1 = zext i1 %oob2 to i32
  %oxide.new1 = or i32 %oxide.old1, %oxide.bit1
  store i32 %oxide.new1, ptr %oxide.oob.1, align 4
  %oxide.chk2.0 = load i32, ptr %oxide.oob.1, align 4
  %oxide.fail2 = icmp ne i32 %oxide.chk2.0, 0
  call void asm sideeffect "@$0 trap;", "b"(i1 %oxide.fail2)
  ret void
}

define void @stack(i64 %i, i64 %n) {
entry:
  %oxide.oob.1 = alloca i32, align 4
  store i32 0, ptr %oxide.oob.1, align 4
  %oob = icmp uge i64 %i, %n
  %oob2 = icmp ugt i64 %i, 7
  %j = select i1 %oob, i64 2305843009750564864, i64 %i
  %s = alloca [8 x float], align 4
  %p = getelementptr float, ptr %s, i64 %j
  br label %body

body:                                             ; preds = %entry
  %v = load float, ptr %p, align 4
  %oxide.any3 = or i1 %oob, %oob2
  %oxide.old4 = load i32, ptr %oxide.oob.1, align 4
  %oxide.bit4 = zext i1 %oxide.any3 to i32
  %oxide.new4 = or i32 %oxide.old4, %oxide.bit4
  store i32 %oxide.new4, ptr %oxide.oob.1, align 4
  %oxide.chk5.0 = load i32, ptr %oxide.oob.1, align 4
  %oxide.fail5 = icmp ne i32 %oxide.chk5.0, 0
  call void asm sideeffect "@$0 trap;", "b"(i1 %oxide.fail5)
  ret void
}

define void @plain(ptr %a) {
start:
  store float 0.000000e+00, ptr %a, align 4
  ret void
}

declare void @__oxide_bounds_fail_if(i1)
