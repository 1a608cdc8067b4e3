define ptx_kernel void @k(ptr %x) {
oxide.uv:
  %g = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %oxide.uv.grid_threads_u32 = icmp ule i32 %g, 4194304
  br i1 %oxide.uv.grid_threads_u32, label %oxide.fast.start, label %start

start:                                            ; preds = %oxide.uv
  ret void

oxide.fast.start:                                 ; preds = %oxide.uv
  %oxide.fast.b = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %oxide.fast.b64 = zext nneg i32 %oxide.fast.b to i64
  %oxide.fast.n = tail call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %oxide.fast.n64 = zext nneg i32 %oxide.fast.n to i64
  %oxide.fast.m = mul nuw nsw i64 %oxide.fast.n64, %oxide.fast.b64
  %oxide.fast.t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %oxide.fast.t64 = zext i32 %oxide.fast.t to i64
  %oxide.u32.1 = mul nuw i32 %oxide.fast.b, %oxide.fast.n
  %oxide.u32.2 = add nuw i32 %oxide.u32.1, %oxide.fast.t
  %oxide.fast.i = zext i32 %oxide.u32.2 to i64
  %a = getelementptr inbounds float, ptr %x, i64 %oxide.fast.i
  %oxide.fast.in = icmp ult i64 %oxide.fast.i, 1000
  br i1 %oxide.fast.in, label %oxide.fast.then, label %oxide.fast.exit

oxide.fast.then:                                  ; preds = %oxide.fast.start
  store float 0.000000e+00, ptr %a, align 4
  br label %oxide.fast.exit

oxide.fast.exit:                                  ; preds = %oxide.fast.then, %oxide.fast.start
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()

declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
