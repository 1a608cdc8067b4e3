; A marker whose block accesses memory through an address that a select on its condition
; poisoned needs no flag: the access faults if the check failed. The second marker has no such
; access and keeps its flag. The same through a stack slot (@stack) keeps both flags: a poisoned
; local address need not fault. A function without markers (@plain) is left alone.
define void @k(ptr %a, i64 %i, i64 %n) {
entry:
  %oob = icmp uge i64 %i, %n
  %oob2 = icmp ugt i64 %i, 7
  %j = select i1 %oob, i64 2305843009750564864, i64 %i
  %p = getelementptr float, ptr %a, i64 %j
  br label %body

body:                                             ; preds = %entry
  tail call void @__oxide_bounds_fail_if(i1 %oob)
  %v = load float, ptr %p, align 4
  tail call void @__oxide_bounds_fail_if(i1 %oob2)
  ret void
}

define void @stack(i64 %i, i64 %n) {
entry:
  %oob = icmp uge i64 %i, %n
  %oob2 = icmp ugt i64 %i, 7
  %j = select i1 %oob, i64 2305843009750564864, i64 %i
  %s = alloca [8 x float], align 4
  %p = getelementptr float, ptr %s, i64 %j
  br label %body

body:                                             ; preds = %entry
  tail call void @__oxide_bounds_fail_if(i1 %oob)
  %v = load float, ptr %p, align 4
  tail call void @__oxide_bounds_fail_if(i1 %oob2)
  ret void
}

define void @plain(ptr %a) {
start:
  store float 0.000000e+00, ptr %a, align 4
  ret void
}

declare void @__oxide_bounds_fail_if(i1)
