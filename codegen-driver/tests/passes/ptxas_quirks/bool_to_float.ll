; Every conversion of an i1 to a float type, unsigned (true is 1) or signed (true is -1), `nneg`
; or not, becomes a select of the two constants, attachments kept; wider integers and vectors of
; i1 convert as they are.
define float @k(i1 %c, i32 %n) {
start:
  %a = uitofp i1 %c to float, !oxide.test !0
  %as = sitofp i1 %c to float
  %b = sitofp i1 %c to double
  %bu = uitofp i1 %c to double
  %h = uitofp nneg i1 %c to half
  %hs = sitofp i1 %c to half
  %f = uitofp i1 %c to bfloat
  %fs = sitofp i1 %c to bfloat
  %t = uitofp i1 true to float
  %w = uitofp i32 %n to float
  %v = uitofp <2 x i1> zeroinitializer to <2 x float>
  %vs = sitofp <2 x i1> zeroinitializer to <2 x half>
  ret float %a
}

!0 = !{}
