define float @k(i1 %c, i32 %n) {
start:
  %a = select i1 %c, float 1.000000e+00, float 0.000000e+00
  %b = select i1 %c, double -1.000000e+00, double 0.000000e+00
  %h = select i1 %c, half 0xH3C00, half 0xH0000
  %w = uitofp i32 %n to float
  %v = uitofp <2 x i1> zeroinitializer to <2 x float>
  ret float %a
}
