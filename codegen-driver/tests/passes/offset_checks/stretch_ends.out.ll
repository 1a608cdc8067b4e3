; Accesses separated by something that might not return (a call, inline asm, `llvm.nvvm.exit`)
; or in another block keep their own checks: the later access (and its fault) might not happen.
; An LLVM intrinsic in between does not end the stretch.
define void @call(ptr %x, i64 %len, i64 %i) {
start:
  %ok0 = icmp ult i64 %i, %len
  %s0 = select i1 %ok0, i64 %i, i64 2305843009750564864
  %a0 = getelementptr float, ptr %x, i64 %s0
  %v0 = load float, ptr %a0, align 4
  call void @other()
  %i1 = or disjoint i64 %i, 256
  %ok1 = icmp ult i64 %i1, %len
  %s1 = select i1 %ok1, i64 %i1, i64 2305843009750564864
  %a1 = getelementptr float, ptr %x, i64 %s1
  %v1 = load float, ptr %a1, align 4
  ret void
}

define void @asm(ptr %x, i64 %len, i64 %i) {
start:
  %ok0 = icmp ult i64 %i, %len
  %s0 = select i1 %ok0, i64 %i, i64 2305843009750564864
  %a0 = getelementptr float, ptr %x, i64 %s0
  %v0 = load float, ptr %a0, align 4
  call void asm sideeffect "exit;", ""()
  %i1 = or disjoint i64 %i, 256
  %ok1 = icmp ult i64 %i1, %len
  %s1 = select i1 %ok1, i64 %i1, i64 2305843009750564864
  %a1 = getelementptr float, ptr %x, i64 %s1
  %v1 = load float, ptr %a1, align 4
  ret void
}

define void @exit(ptr %x, i64 %len, i64 %i) {
start:
  %ok0 = icmp ult i64 %i, %len
  %s0 = select i1 %ok0, i64 %i, i64 2305843009750564864
  %a0 = getelementptr float, ptr %x, i64 %s0
  %v0 = load float, ptr %a0, align 4
  call void @llvm.nvvm.exit()
  %i1 = or disjoint i64 %i, 256
  %ok1 = icmp ult i64 %i1, %len
  %s1 = select i1 %ok1, i64 %i1, i64 2305843009750564864
  %a1 = getelementptr float, ptr %x, i64 %s1
  %v1 = load float, ptr %a1, align 4
  ret void
}

define void @blocks(ptr %x, i64 %len, i64 %i) {
start:
  %ok0 = icmp ult i64 %i, %len
  %s0 = select i1 %ok0, i64 %i, i64 2305843009750564864
  %a0 = getelementptr float, ptr %x, i64 %s0
  %v0 = load float, ptr %a0, align 4
  br label %next

next:
  %i1 = or disjoint i64 %i, 256
  %ok1 = icmp ult i64 %i1, %len
  %s1 = select i1 %ok1, i64 %i1, i64 2305843009750564864
  %a1 = getelementptr float, ptr %x, i64 %s1
  %v1 = load float, ptr %a1, align 4
  ret void
}

define void @intrinsic(ptr %x, i64 %len, i64 %i) {
start:
  %ok0 = icmp ult i64 %i, %len
  %oxide.last1 = add nuw i64 %i, 256
  %oxide.inb1 = icmp ult i64 %oxide.last1, %len
  %oxide.base1 = select i1 %oxide.inb1, i64 %i, i64 2305843009750564864
  %s0 = add i64 %oxide.base1, 0
  %a0 = getelementptr float, ptr %x, i64 %s0
  %v0 = load float, ptr %a0, align 4
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i1 = or disjoint i64 %i, 256
  %ok1 = icmp ult i64 %i1, %len
  %s1 = add i64 %oxide.base1, 256
  %a1 = getelementptr float, ptr %x, i64 %s1
  %v1 = load float, ptr %a1, align 4
  ret void
}

declare void @other()

declare void @llvm.nvvm.exit()

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
