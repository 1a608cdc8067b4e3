//! The generator's random source (SplitMix64): a program is a pure function of its seed and
//! index, so `seed:index` names it on every machine.

/// SplitMix64 (Steele, Lea, Flood 2014): one multiply-xorshift per draw, full period.
#[derive(Clone, Debug)]
pub struct Rng(u64);

/// SplitMix64's output function: a good 64-bit mix on its own.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed of program `index` of a run seeded with `seed`.
pub fn program_seed(seed: u64, index: u64) -> u64 {
    mix64(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ mix64(index.wrapping_add(0x632b_e59b_d9b4_e019)))
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }

    /// Uniform in `0..n` (`n > 0`); the modulo bias is irrelevant for generation.
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// An index into `weights`, each chosen with probability proportional to its weight.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut x = self.below(total.max(1) as usize) as u32;
        for (i, &w) in weights.iter().enumerate() {
            if x < w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        assert!((0..100).all(|_| a.next_u64() == b.next_u64()));
        assert_ne!(program_seed(1, 2), program_seed(2, 1));
    }

    #[test]
    fn weighted_respects_zero_weights() {
        let mut r = Rng::new(3);
        assert!((0..1000).all(|_| r.weighted(&[0, 5, 0, 1]) % 2 == 1));
    }
}
