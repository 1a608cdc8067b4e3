//! The names that the lowering and the passes after `opt` agree on: what the lowering writes for
//! a pass to find, and what one pass leaves for a later one. Between passes the module goes
//! through `opt`, so what a pass must find again is carried by a name that `opt` keeps.

/// The call that records a failed bounds check (`lower/bounds.rs`); replaced by
/// `pipeline/deferred_traps.rs` after `opt`.
pub const BOUNDS_FAIL_IF: &str = "__oxide_bounds_fail_if";

/// Added to the address of an out-of-bounds access: bit 63 (no device address has it) and bit 31
/// (past every shared or local window once a 32-bit state-space address is taken), so the access
/// faults instead of reaching another buffer. For elements of a power-of-two size the index is
/// replaced by `POISON_OFFSET / size`.
pub const POISON_OFFSET: u64 = 0x8000_0000_8000_0000;

/// Whether `v` is a poisoned index: `POISON_OFFSET / 2^k` for an element of `2^k` bytes.
pub fn is_poison_index(v: u64) -> bool {
    v != 0 && (0..=31).any(|k| POISON_OFFSET >> k == v)
}

/// Prefix that hides the launch-bound attributes (`nvvm.maxntid`, `nvvm.reqntid`) from `opt`;
/// `pipeline/llvm.rs` removes it after the first `opt`, and `llc` turns them into `.maxntid` /
/// `.reqntid`.
///
/// Why: given those attributes, `opt`'s NVVMIntrRange narrows the range of the kernel's own
/// `%tid` reads, InstCombine then deletes the assumes of `assume_thread_bounds` as already known,
/// and the `%tid` reads of the inlined body (in `cuda_device`, compiled without the bounds) keep
/// the generic `[0, 1024)`: bounds checks of shared arrays indexed by the thread stay.
pub const LAUNCH_ATTRS_HIDDEN_FROM_OPT: &str = "oxide.after-opt.";

/// Label of a versioned kernel's entry block, which tests its condition `U`, and prefix of the
/// values computed there (`pipeline/uniform_bounds/`).
pub const VERSION_ENTRY: &str = "oxide.uv";

/// Prefix of the names of a versioned kernel's fast copy: its blocks run only where `U` held
/// (`pipeline/flat_index_u32.rs` and `pipeline/fast_twin.rs` find them by it).
pub const FAST_COPY: &str = "oxide.fast.";

/// Whether the block `label` belongs to a fast copy.
pub fn is_fast_copy_label(label: &str) -> bool {
    label.trim_start_matches('"').starts_with(FAST_COPY)
}

/// Name of a flat kernel's entry compare `nctaid.x <= 2^32 / B` (its `U` asks it; the kernels
/// whose module has it get a 32-bit flat index in their fast copy, `pipeline/flat_index_u32.rs`).
pub const GRID_THREADS_U32: &str = "oxide.uv.grid_threads_u32";

/// A predicated trap (`pipeline/deferred_traps.rs`): ptxas keeps it where it is, with a short
/// branch around it.
pub const TRAP_IF_ASM: &str = "asm sideeffect \"@$0 trap;\", \"b\"";
