//! Edits of a function's instructions collected while reading it and applied at once, so every
//! position names an instruction of the function as it was read.

use std::collections::BTreeMap;

use super::function::Function;
use super::inst::Inst;

/// Instructions to put before others and instructions to replace, by (block, index) in the
/// unedited function.
#[derive(Default)]
pub struct Edits {
    before: BTreeMap<(usize, usize), Vec<Inst>>,
    replace: BTreeMap<(usize, usize), Vec<Inst>>,
}

impl Edits {
    pub fn new() -> Edits {
        Edits::default()
    }

    /// Puts `insts` before instruction `at` of block `block` (at the block's end for `at` past its
    /// last), after those put there earlier.
    pub fn insert_before(&mut self, block: usize, at: usize, insts: impl IntoIterator<Item = Inst>) {
        self.before.entry((block, at)).or_default().extend(insts);
    }

    /// Replaces instruction `at` of block `block` by `insts` (none: removes it); what was put
    /// before it stays before them.
    pub fn replace(&mut self, block: usize, at: usize, insts: Vec<Inst>) {
        self.replace.insert((block, at), insts);
    }

    pub fn is_empty(&self) -> bool {
        self.before.is_empty() && self.replace.is_empty()
    }

    /// Applies the edits to `f`; whether there were any.
    pub fn apply(mut self, f: &mut Function) -> bool {
        if self.is_empty() {
            return false;
        }
        for (b, block) in f.blocks.iter_mut().enumerate() {
            let read = std::mem::take(&mut block.insts);
            for (i, inst) in read.into_iter().enumerate() {
                block.insts.extend(self.before.remove(&(b, i)).unwrap_or_default());
                match self.replace.remove(&(b, i)) {
                    Some(with) => block.insts.extend(with),
                    None => block.insts.push(inst),
                }
            }
            // What goes past the block's last instruction.
            while let Some(past) = self.before.first_entry().filter(|e| e.key().0 == b) {
                block.insts.extend(past.remove());
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_apply_at_the_positions_read() {
        let body = ["entry:", "  %a = add i32 1, 2", "  %b = add i32 %a, 3", "  ret void"];
        let mut f = Function::parse("define void @f() {", &body).expect("parses");
        let x = |name: &str| Inst::parse(&format!("  %{name} = add i32 0, 0"));
        let mut edits = Edits::new();
        edits.insert_before(0, 1, [x("x1")]);
        edits.replace(0, 1, vec![x("b1"), x("b2")]);
        edits.insert_before(0, 1, [x("x2")]);
        edits.replace(0, 0, Vec::new());
        edits.insert_before(0, 3, [x("end")]);
        assert!(edits.apply(&mut f));
        let names: Vec<&str> = f.blocks[0].insts.iter().map(|i| i.result().unwrap_or("-")).collect();
        assert_eq!(names, ["x1", "x2", "b1", "b2", "-", "end"]);
        assert!(!Edits::new().apply(&mut f));
    }
}
