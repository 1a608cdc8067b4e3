//! Regression cases found by oxide-fuzz (tools/fuzz): shrunk generated programs that once made
//! the device compiler fail (`./x fuzz shrink … --save-regression` writes them). Each module is
//! the program as shrunk; its case runs it for one seed on the fuzz input.
#![allow(warnings)]

/// The input every fuzz program reads (tools/fuzz/template/common.rs `input()`).
pub const INPUT: [u64; 64] = [
    0x0000000000000000,
    0x0000000000000001,
    0xffffffffffffffff,
    0x8000000000000000,
    0x7fffffffffffffff,
    0x0000000000000002,
    0x0000000080000000,
    0x000000007fffffff,
    0x00000000ffffffff,
    0x0000000000000080,
    0x00000000000000ff,
    0x000000000000007f,
    0x0000000000008000,
    0x000000000000ffff,
    0x3ff0000000000000,
    0xbff8000000000000,
    0x7ff8000000000000,
    0x7ff0000000000000,
    0x0010000000000000,
    0x0000000000000001,
    0x000000003f800000,
    0x000000007fc00000,
    0x0000000080000000,
    0x8000000000000000,
    0x00000000abd1c03d,
    0xd573529b34a1d093,
    0x2f90b72e996dccbe,
    0x00000000000a2d41,
    0x01404ce914938008,
    0x14bc574c2a2b4c72,
    0x05c7e2d883038460,
    0x8931545f4f9ea651,
    0xf984db4ef14fde1b,
    0x00000000004d01a0,
    0xcdb8c9cd9a62da0f,
    0x6a6e60fd5089adec,
    0x011d750b651beeee,
    0x97f6c69811cfb13b,
    0x380e8b5c685039cf,
    0x00000000000006bf,
    0x2ab8c4e395cb5958,
    0x0028babe93685d04,
    0x997f31f8a4cd9c80,
    0xd21d99f3172d8bac,
    0x5a2b349fbc1e0ffe,
    0x0000000000797f89,
    0xe7175a23bfad7b92,
    0xf7e9ff7484731d95,
    0x0017935dc3e4fa7a,
    0x54aa3f71e1f9a4ea,
    0xd8c4ca1b231b3c6f,
    0x00000002c8d3baaa,
    0x64516d7d46552c2c,
    0x1d8a4e1ddb56c2db,
    0x0000000000000246,
    0x495647d3953b24f7,
    0x86228b0724bb8f48,
    0x0000000000a3c27a,
    0xf7a2cc8df2b2c4f6,
    0x41a2ba708473bf43,
    0x003829c3352d493a,
    0x3dfafd29d7a4f68a,
    0xbfd57627fe350937,
    0x0000000000000058,
];

/// mismatch ptxas folded a bool-to-f32 conversion into the integer 1 (pipeline/ptxas_quirks.rs)
pub mod fuzz_3_467 {
    /// A bool converted to a float whose bits are then used as an integer: `ptxas -O1..-O3` (13.0 JIT
    /// and 13.5) folded `selp 1,0` + `cvt.rn.f32.u32` + zero-extension into the integer 1.
    pub fn run(seed: u64, input: &[u64; 64]) -> u64 {
        let x = input[(seed % 64) as usize] ^ seed;
        let flag = x % 3 == 1;
        let up = flag as u32 as f32;
        let down = -(flag as i32) as f32;
        let wide = flag as u64 as f64;
        (up.to_bits() as u64) ^ ((down.to_bits() as u64) << 32) ^ wide.to_bits().rotate_left(7)
    }
}

pub fn fuzz_3_467(seed: u64) -> u64 {
    fuzz_3_467::run(seed, &INPUT)
}
