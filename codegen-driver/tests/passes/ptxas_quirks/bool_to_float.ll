define float @k(i1 %c, i32 %n) {
start:
  %a = uitofp i1 %c to float
  %b = sitofp i1 %c to double
  %h = uitofp nneg i1 %c to half
  %w = uitofp i32 %n to float
  %v = uitofp <2 x i1> zeroinitializer to <2 x float>
  ret float %a
}
