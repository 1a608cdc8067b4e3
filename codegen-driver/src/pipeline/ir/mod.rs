//! The IR model the passes after `opt` work on: each `opt` output is parsed once into a
//! [`Module`], the passes edit it, and it is printed for the next `opt` or `llc` run.
//!
//! - `lex.rs`: the one tokenizer of IR text (names, strings, metadata).
//! - `types.rs`: types and operands; `inst.rs`: instructions, their text and their operation;
//!   `parse.rs`: reading them.
//! - `function.rs`: definitions with typed parameters and blocks; `module.rs`: the module, every
//!   line outside a definition kept as it is.
//! - `cfg.rs`: successors, predecessors, dominators, natural loops, uses.
//! - `debug_copy.rs`: copying a function's debug scopes for a copy of the function.
//! - `edit.rs`: edits of a function's instructions, collected while reading it and applied at once.
//!
//! Printing is exact: a module that no pass changed prints back byte for byte (each instruction
//! keeps its text; an edited one is rendered from its operation), so a pass's output differs
//! from its input only where it edited.

pub mod cfg;
pub mod debug_copy;
pub mod edit;
pub mod function;
pub mod inst;
pub mod lex;
pub mod module;
mod parse;
pub mod types;

/// The prefix of the special-register intrinsics (`llvm.nvvm.read.ptx.sreg.tid.x`).
pub const SREG: &str = "llvm.nvvm.read.ptx.sreg.";

pub use cfg::Cfg;
pub use edit::Edits;
pub use function::{Block, Function, Namer};
pub use inst::{BinOp, Call, Callee, CastOp, Flags, Inst, Op, Pred};
pub use module::{Item, Module};
pub use types::{I1, I32, I64, Type, Value};

#[cfg(test)]
mod tests;
