define void @k(i1 %f) {
start:
  call void asm sideeffect "@$0 trap;", "b"(i1 false) #8
  tail call void asm sideeffect "@$0 trap;", "b"(i1 false)
  call void asm sideeffect "@$0 trap;", "b"(i1 %f)
  ret void
}

attributes #8 = { nounwind }
