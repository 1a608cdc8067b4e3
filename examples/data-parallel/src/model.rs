//! The problem on the host: the MLP's sizes, its parameters, a random batch, and one training step
//! in float64 on the CPU (the reference the GPUs are checked against).

/// Inputs, hidden units, outputs, samples in the batch (split over the GPUs), learning rate.
pub const INPUTS: usize = 64;
pub const UNITS: usize = 128;
pub const OUTPUTS: usize = 16;
pub const BATCH: usize = 512;
pub const LR: f32 = 0.5;

/// The four parameter tensors (or their gradients), in any storage: host `Vec`s or device buffers.
#[derive(Clone, Debug, PartialEq)]
pub struct Params<T> {
    /// `INPUTS × UNITS`.
    pub w1: T,
    /// `UNITS`.
    pub b1: T,
    /// `UNITS × OUTPUTS`.
    pub w2: T,
    /// `OUTPUTS`.
    pub b2: T,
}

impl<T> Params<T> {
    /// The tensors with their names, in order.
    pub fn named(&self) -> [(&'static str, &T); 4] {
        [("w1", &self.w1), ("b1", &self.b1), ("w2", &self.w2), ("b2", &self.b2)]
    }

    /// Each tensor mapped by `f`.
    pub fn try_map<U, E>(&self, mut f: impl FnMut(&T) -> Result<U, E>) -> Result<Params<U>, E> {
        Ok(Params { w1: f(&self.w1)?, b1: f(&self.b1)?, w2: f(&self.w2)?, b2: f(&self.b2)? })
    }
}

/// A batch and the parameters before the step.
pub struct Problem {
    /// `BATCH × INPUTS`.
    pub x: Vec<f32>,
    /// `BATCH × OUTPUTS`.
    pub t: Vec<f32>,
    pub params: Params<Vec<f32>>,
}

/// A 64-bit LCG (Knuth's MMIX constants) with an xorshifted output: reproducible inputs.
struct Lcg(u64);

impl Lcg {
    /// Uniform in `[-scale, scale)`.
    fn next(&mut self, scale: f32) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let x = self.0 ^ (self.0 >> 29);
        ((x >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
    }

    fn vec(&mut self, len: usize, scale: f32) -> Vec<f32> {
        (0..len).map(|_| self.next(scale)).collect()
    }
}

impl Problem {
    /// Random inputs and targets in [-1, 1); weights scaled by 1/√fan-in.
    pub fn random(seed: u64) -> Problem {
        let mut rng = Lcg(seed);
        let x = rng.vec(BATCH * INPUTS, 1.0);
        let t = rng.vec(BATCH * OUTPUTS, 1.0);
        let w1 = rng.vec(INPUTS * UNITS, 1.0 / (INPUTS as f32).sqrt());
        let b1 = rng.vec(UNITS, 0.1);
        let w2 = rng.vec(UNITS * OUTPUTS, 1.0 / (UNITS as f32).sqrt());
        let b2 = rng.vec(OUTPUTS, 0.1);
        Problem { x, t, params: Params { w1, b1, w2, b2 } }
    }
}

/// The rows of the batch that GPU `rank` of `ranks` trains on.
pub fn shard(rank: usize, ranks: usize) -> std::ops::Range<usize> {
    rank * BATCH / ranks..(rank + 1) * BATCH / ranks
}

/// The loss `Σ (y − t)² / (2 · BATCH)` of `params` on the batch, in float64.
pub fn loss(p: &Problem, params: &Params<Vec<f32>>) -> f64 {
    let (_, y) = forward(p, params);
    y.iter().zip(&p.t).map(|(y, t)| (y - *t as f64).powi(2)).sum::<f64>() / (2.0 * BATCH as f64)
}

fn forward(p: &Problem, w: &Params<Vec<f32>>) -> (Vec<f64>, Vec<f64>) {
    let mut h = vec![0.0f64; BATCH * UNITS];
    let mut y = vec![0.0f64; BATCH * OUTPUTS];
    for r in 0..BATCH {
        for j in 0..UNITS {
            let acc = w.b1[j] as f64
                + (0..INPUTS).map(|k| p.x[r * INPUTS + k] as f64 * w.w1[k * UNITS + j] as f64).sum::<f64>();
            h[r * UNITS + j] = acc.max(0.0);
        }
        for o in 0..OUTPUTS {
            y[r * OUTPUTS + o] =
                w.b2[o] as f64 + (0..UNITS).map(|j| h[r * UNITS + j] * w.w2[j * OUTPUTS + o] as f64).sum::<f64>();
        }
    }
    (h, y)
}

/// One SGD step on the whole batch in float64: the mean gradient and the updated parameters.
pub fn cpu_step(p: &Problem) -> (Params<Vec<f64>>, Params<Vec<f64>>) {
    let w = &p.params;
    let (h, y) = forward(p, w);
    let dy: Vec<f64> = y.iter().zip(&p.t).map(|(y, t)| (y - *t as f64) / BATCH as f64).collect();
    let mut g = Params {
        w1: vec![0.0; INPUTS * UNITS],
        b1: vec![0.0; UNITS],
        w2: vec![0.0; UNITS * OUTPUTS],
        b2: vec![0.0; OUTPUTS],
    };
    for r in 0..BATCH {
        for o in 0..OUTPUTS {
            let d = dy[r * OUTPUTS + o];
            g.b2[o] += d;
            for j in 0..UNITS {
                g.w2[j * OUTPUTS + o] += h[r * UNITS + j] * d;
            }
        }
        for j in 0..UNITS {
            if h[r * UNITS + j] <= 0.0 {
                continue;
            }
            let dh: f64 = (0..OUTPUTS).map(|o| dy[r * OUTPUTS + o] * w.w2[j * OUTPUTS + o] as f64).sum();
            g.b1[j] += dh;
            for k in 0..INPUTS {
                g.w1[k * UNITS + j] += p.x[r * INPUTS + k] as f64 * dh;
            }
        }
    }
    let step = |w: &Vec<f32>, g: &Vec<f64>| w.iter().zip(g).map(|(w, g)| *w as f64 - LR as f64 * g).collect();
    let updated =
        Params { w1: step(&w.w1, &g.w1), b1: step(&w.b1, &g.b1), w2: step(&w.w2, &g.w2), b2: step(&w.b2, &g.b2) };
    (g, updated)
}
