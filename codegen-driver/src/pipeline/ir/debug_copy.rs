//! Debug scopes for a copy of a function: a `DISubprogram` describes one function, so a copy
//! gets its own, and its own copy of each location whose scope or inlining chain leads to it.

use std::collections::HashMap;

use super::module::{Item, Module};

/// The module's metadata nodes and the copies made for copies of functions.
pub struct DebugCopier {
    nodes: HashMap<u64, String>,
    next: u64,
    added: Vec<String>,
}

impl DebugCopier {
    pub fn new(module: &Module) -> DebugCopier {
        let nodes: HashMap<u64, String> = module.metadata().into_iter().map(|(k, v)| (k, v.to_string())).collect();
        let next = nodes.keys().max().map_or(0, |m| m + 1);
        DebugCopier { nodes, next, added: Vec::new() }
    }

    /// A copy of the subprogram `id`, `None` when `id` is not a (distinct) subprogram.
    pub fn copy_subprogram(&mut self, id: u64) -> Option<u64> {
        let text = self.nodes.get(&id)?;
        if !text.starts_with("distinct !DISubprogram(") {
            return None;
        }
        let text = text.clone();
        Some(self.add(text))
    }

    /// The node to use for `id` in the copy whose original subprogram is `from` and whose own is
    /// `to`: itself when its `scope:`/`inlinedAt:` chain does not lead to `from`, else a copy
    /// (made once, remembered in `copies`) that leads to `to`.
    pub fn remap(&mut self, id: u64, from: u64, to: u64, copies: &mut HashMap<u64, u64>) -> u64 {
        if id == from {
            return to;
        }
        if let Some(&copy) = copies.get(&id) {
            return copy;
        }
        let Some(text) = self.nodes.get(&id).cloned() else { return id };
        // Only locations and lexical blocks lead to the subprogram (others: themselves).
        if !(text.contains("!DILocation(") || text.contains("!DILexicalBlock")) {
            return id;
        }
        let mut mapped = Vec::new();
        for key in ["scope: !", "inlinedAt: !"] {
            let Some((_, rest)) = text.split_once(key) else { continue };
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let Ok(target) = digits.parse::<u64>() else { continue };
            let new = self.remap(target, from, to, copies);
            if new != target {
                mapped.push((key, target, new));
            }
        }
        if mapped.is_empty() {
            return id;
        }
        let mut copy = text;
        for (key, target, new) in mapped {
            copy = copy.replacen(&format!("{key}{target}"), &format!("{key}{new}"), 1);
        }
        let new_id = self.add(copy);
        copies.insert(id, new_id);
        new_id
    }

    fn add(&mut self, text: String) -> u64 {
        let id = self.next;
        self.next += 1;
        self.nodes.insert(id, text.clone());
        self.added.push(format!("!{id} = {text}"));
        id
    }

    /// Appends the nodes made to the module.
    pub fn finish(self, module: &mut Module) {
        module.items.extend(self.added.into_iter().map(Item::Line));
    }
}
