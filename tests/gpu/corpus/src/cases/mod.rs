//! The corpus: ordinary Rust functions `fn case(x: In) -> Out`, each run on the CPU and, through
//! the `#[kernel]` wrappers that `main.rs` generates, on the GPU.
pub mod control;
pub mod data;
pub mod floats;
pub mod fuzz_regressions;
pub mod ints;
pub mod traits;
