; Every conversion of an i1 to a float type, unsigned (true is 1) or signed (true is -1), `nneg`
; or not, becomes a select of the two constants, attachments kept; wider integers and vectors of
; i1 convert as they are.
define float @k(i1 %c, i32 %n) {
start:
  %a = select i1 %c, float 1.000000e+00, float 0.000000e+00, !oxide.test !0
  %as = select i1 %c, float -1.000000e+00, float 0.000000e+00
  %b = select i1 %c, double -1.000000e+00, double 0.000000e+00
  %bu = select i1 %c, double 1.000000e+00, double 0.000000e+00
  %h = select i1 %c, half 0xH3C00, half 0xH0000
  %hs = select i1 %c, half 0xHBC00, half 0xH0000
  %f = select i1 %c, bfloat 0xR3F80, bfloat 0xR0000
  %fs = select i1 %c, bfloat 0xRBF80, bfloat 0xR0000
  %t = select i1 true, float 1.000000e+00, float 0.000000e+00
  %w = uitofp i32 %n to float
  %v = uitofp <2 x i1> zeroinitializer to <2 x float>
  %vs = sitofp <2 x i1> zeroinitializer to <2 x half>
  ret float %a
}

!0 = !{}
