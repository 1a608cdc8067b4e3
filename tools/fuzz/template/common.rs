//! What the CPU and GPU sides of an oxide-fuzz batch share on the host: the input, the thread count,
//! the poison value and the digest of a program's checksums (copied into every generated crate by
//! `oxide-fuzz`; edit it in tools/fuzz/template/).
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Threads per program: one full block of 256 and a partial second block.
pub const THREADS: usize = 300;

/// Written to every output element before a launch; a thread that writes nothing shows.
pub const POISON: u64 = 0xA5A5_A5A5_A5A5_A5A5;

/// The input every program reads: edge values of integers and floats first, then mixed bits.
pub fn input() -> Vec<u64> {
    let edges = [
        0,
        1,
        u64::MAX,
        i64::MIN as u64,
        i64::MAX as u64,
        2,
        0x8000_0000,
        0x7fff_ffff,
        0xffff_ffff,
        0x80,
        0xff,
        0x7f,
        0x8000,
        0xffff,
        1.0f64.to_bits(),
        (-1.5f64).to_bits(),
        f64::NAN.to_bits(),
        f64::INFINITY.to_bits(),
        f64::MIN_POSITIVE.to_bits(),
        5e-324f64.to_bits(),
        1.0f32.to_bits() as u64,
        f32::NAN.to_bits() as u64,
        (-0.0f32).to_bits() as u64,
        (-0.0f64).to_bits(),
    ];
    let mut x = 0x0123_4567_89ab_cdefu64;
    let mut v: Vec<u64> = edges.to_vec();
    while v.len() < 64 {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        // Some small values, so loops and shifts see them too.
        v.push(if v.len().is_multiple_of(3) { z >> (z & 63) } else { z });
    }
    v
}

/// All threads' checksums folded into one number.
pub fn digest(sums: &[u64]) -> u64 {
    sums.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &s| (h ^ s).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29))
}

/// `run`'s checksum for every thread (seeded by `seed_of`), or the message of its panic.
pub fn cpu_sums(run: fn(u64, &[u64]) -> u64, seed_of: fn(usize) -> u64, input: &[u64]) -> Result<Vec<u64>, String> {
    catch_unwind(AssertUnwindSafe(|| (0..THREADS).map(|i| run(seed_of(i), input)).collect())).map_err(|e| {
        e.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| e.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into())
    })
}
