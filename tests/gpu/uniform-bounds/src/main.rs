//! GPU test of the versioning in codegen-driver/src/pipeline/uniform_bounds.rs: a kernel whose
//! checks all pass when a condition on its parameters and launch shape holds runs a copy
//! without them; otherwise the checked copy. Each kernel runs with inputs for both copies:
//! - `add` (`if let Some(c) = c.get_mut(i) { *c = a[i] + b[i] }`): the fast copy when
//!   `c.len() <= a.len(), b.len()`; the checked one when `c` is longer but the launch covers only
//!   `a.len()` threads (every access still in bounds, `c`'s tail untouched).
//! - `transpose` (the bench's: guarded by `x < w && y + j < h`, a 32 x 33 shared tile): the fast
//!   copy when `h * w <= input.len()` and the block is at most 32 x 8 (ragged edges included);
//!   the checked one for a 64 x 64 matrix in buffers of 2048 elements with one block, which
//!   touches only the top-left 32 x 32.
//!
//! - `add` in a 2D grid of 2D blocks: its fast copy assumes a flat launch (it linearises the
//!   grid with `thread::index_1d`), so this takes the checked copy.
//!
//! - `strided_row_sums` (sgemm's `t += 32` loop reading `x[row * n + t + tx]`): the fast copy for
//!   n a multiple of 32 and for a ragged n with padding; one element of padding too few must
//!   stop the kernel (in a child process: one stop per context).
//!
//! - `tag_block` (`c[i] = a[i]` mixed with `blockIdx.x` in a loop) in flat launches of just
//!   under and just over 2^32 threads: the fast copy's index is 32-bit, so the larger launch
//!   must take the checked copy.
//!
//! - `addresses` with empty buffers: slice pointers arrive non-null (`abi::EMPTY_SLICE_ADDRESS`).
//!
//! - `stencil5` (the bench's: `to_linear` tests only `x < n`, the interior `x, y != 0, n - 1`):
//!   the fast copy when `out.len() <= input.len() <= n * n` and `n * n - 2 < input.len()`
//!   (`n x n` buffers, `n` from 1, where the interior is empty, to ragged sizes; `input` longer),
//!   whose neighbour reads are bounded through `y != n - 1` and the guard `y * n + x < out.len()`;
//!   the checked copy when `input` is one element short and the launch stops a row early
//!   (every access in bounds), or `out` is longer than `input` (its tail untouched).
//!
//! Launched through the typed methods, a kernel whose condition holds runs its unchecked twin
//! (`<entry>__oxide_fast_<hash>`, `oxide_contract::fast_launch`: the host evaluates the condition);
//! each check asserts which one ran (`cuda_core::twin_launches`). Then the whole test runs again
//! in a child process with `CUDA_OXIDE_TWINS=0`, where each kernel runs its own (checked) body.
//!
//! Outputs are poisoned (NaN) first and compared bit for bit with the CPU. Last, `add` with `c`
//! longer than `a` and a launch that covers `c` must stop the kernel (the checked copy's check);
//! before it, `stencil5` reading past a short `input` must stop the kernel too (in a child
//! process).
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, expect_bounds_stop, same_bits_f32};

/// The bench's kernels (`transpose`, `stencil5`), tested here as they are timed.
#[allow(dead_code)]
#[path = "../../../../bench/src/kernels.rs"]
mod bench;
use bench::{BLOCK_ROWS, TILE};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn add(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(c) = c.get_mut(idx) {
            *c = a[i] + b[i];
        }
    }

    /// `c[i] = a[i]`, `rounds` times rotated left by 5 and xored with `blockIdx.x`: were the
    /// index of a thread past 2^32 wrapped to 32 bits, it would write a block number 2^22 higher
    /// into an element of the first blocks. (The loop: only kernels with one get the 32-bit
    /// index, `uniform_bounds`.)
    #[kernel]
    pub fn tag_block(a: &[u32], mut c: DisjointSlice<u32>, rounds: u32) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(c) = c.get_mut(idx) {
            let mut v = a[i];
            for _ in 0..rounds {
                v = v.rotate_left(5) ^ thread::blockIdx_x();
            }
            *c = v;
        }
    }

    /// The addresses and lengths the kernel sees for its slices (`out` has 4 elements).
    #[kernel]
    pub fn addresses(a: &[f32], mut c: DisjointSlice<f32>, out: &mut [u64]) {
        if thread::index_1d().get() == 0 {
            out[0] = a.as_ptr() as u64;
            out[1] = a.len() as u64;
            out[2] = c.as_mut_ptr() as u64;
            out[3] = c.len() as u64;
        }
    }

    /// Row `blockIdx.x` of a `rows x n` matrix summed in 32-wide strides, sgemm's tile loop:
    /// `out[row * 32 + tx] = x[row*n + tx] + x[row*n + 32 + tx] + …` while the stride start
    /// `t < n`. Blocks of 32 threads.
    #[kernel]
    pub fn strided_row_sums(x: &[f32], out: &mut [f32], n: u32) {
        let n = n as usize;
        let (tx, row) = (thread::threadIdx_x() as usize, thread::blockIdx_x() as usize);
        let mut acc = 0.0f32;
        let mut t = 0;
        while t < n {
            acc += x[row * n + t + tx];
            t += 32;
        }
        out[row * 32 + tx] = acc;
    }
}

/// `out` (`w x h`) for `input` (`h x w`), for the rows `< rows` and columns `< cols` of the input;
/// NaN elsewhere, as the poisoned output.
fn transposed(input: &[f32], w: usize, h: usize, rows: usize, cols: usize, out_len: usize) -> Vec<f32> {
    let mut out = vec![f32::NAN; out_len];
    for r in 0..rows.min(h) {
        for c in 0..cols.min(w) {
            out[c * h + r] = input[r * w + c];
        }
    }
    out
}

/// `strided_row_sums` on the CPU, in the kernel's order of additions.
fn strided_row_sums(x: &[f32], rows: usize, n: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; rows * 32];
    for row in 0..rows {
        for tx in 0..32 {
            let mut acc = 0.0f32;
            for t in (0..n).step_by(32) {
                acc += x[row * n + t + tx];
            }
            out[row * 32 + tx] = acc;
        }
    }
    out
}

const C0: f64 = 0.5;
const C1: f64 = 0.125;

/// `stencil5`'s result for rows `< rows` of an `n x n` grid in an `out_len` buffer (NaN elsewhere,
/// as the poisoned output). Inputs are multiples of 1/256 below 8 in magnitude, so every sum and
/// product is exact and a fused multiply-add gives the same bits.
fn stencil_ref(input: &[f64], n: usize, rows: usize, out_len: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; out_len];
    for y in 0..rows.min(n) {
        for x in 0..n {
            let c = y * n + x;
            if c >= out_len {
                continue;
            }
            out[c] = if x == 0 || y == 0 || x == n - 1 || y == n - 1 {
                input[c]
            } else {
                C0 * input[c] + C1 * (input[c - n] + input[c + n] + input[c - 1] + input[c + 1])
            };
        }
    }
    out
}

/// Set in the child process that runs one stopping check (see `stop_check`).
const CHILD: &str = "UNIFORM_BOUNDS_STOP_CHILD";

/// Runs `launch` (one kernel launch) and checks that it ran the kernel's unchecked twin exactly
/// when `twin` and twins are on in this process.
fn expect_twin(twin: bool, what: &str, launch: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    let twins_on = std::env::var_os(oxide_contract::fast_launch::TWINS_ENV).is_none_or(|v| v != "0");
    let before = cuda_core::twin_launches();
    launch()?;
    let ran = cuda_core::twin_launches() - before;
    let want = u64::from(twin && twins_on);
    if ran == want { Ok(()) } else { Err(format!("{what}: {ran} launches of the unchecked twin, expected {want}")) }
}

/// Runs the check `name`, which stops a kernel, in a child process of its own: a stopped kernel
/// leaves its context unusable, so one process can see only one.
fn stop_check(report: &mut Report, name: &str, f: impl FnOnce() -> Result<(), String>) {
    if std::env::var_os(CHILD).is_some() {
        return report.check(name, f);
    }
    report.check(name, || {
        let exe = ck(std::env::current_exe(), "current_exe")?;
        let out = ck(
            std::process::Command::new(exe).env(CHILD, "1").env("GPU_TEST_ONLY", name).output(),
            "run the child process",
        )?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        for line in stdout.lines().filter(|l| l.starts_with("    ")) {
            println!("{line}");
        }
        let passed = stdout.lines().any(|l| l.starts_with("PASS ") && l.ends_with(&format!("/{name}")));
        if out.status.success() && passed {
            Ok(())
        } else {
            Err(format!("child process: {}\n{stdout}{}", out.status, String::from_utf8_lossy(&out.stderr)))
        }
    });
}

fn dyadic(rng: &mut Lcg, len: usize) -> Vec<f64> {
    (0..len).map(|_| (rng.next_u32() % 4096) as f64 / 256.0 - 8.0).collect()
}

fn same_bits_f64(a: &f64, b: &f64) -> bool {
    a.to_bits() == b.to_bits()
}

/// The bench's launch: 32 x 8 blocks covering `n` columns and `rows` rows.
fn stencil_launch(n: usize, rows: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(32).max(1) as u32, rows.div_ceil(8).max(1) as u32, 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    }
}

fn main() {
    let mut report = Report::new("uniform-bounds");
    let mut rng = Lcg::from_env_or_clock();
    let (ctx, s, m) = report.load(kernels::load);
    let b = report.setup(|| ck(bench::kernels::load(&ctx), "bench::kernels::load"));
    let flat = |threads: usize| LaunchConfig {
        grid_dim: (threads.div_ceil(256) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };

    report.check("add_fast_copy", || {
        // A ragged length: the guard `i < c.len()` stops the last block's tail.
        let n = 256 * 37 + 11;
        let (a, b) = (rng.vec_f32(n), rng.vec_f32(n));
        let (ad, bd) = (ck(DeviceBuffer::from_host(&s, &a), "copy a")?, ck(DeviceBuffer::from_host(&s, &b), "copy b")?);
        let mut cd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; n]), "poison c")?;
        expect_twin(true, "add", || ck(m.add(&s, flat(n), &ad, &bd, &mut cd), "launch add"))?;
        let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        compare("add", &ck(cd.to_host_vec(&s), "copy c")?, &want, same_bits_f32)
    });

    report.check("add_checked_copy", || {
        // `c` longer than `a` and `b`: the uniform condition fails, the launch stays in bounds.
        let n = 256 * 37;
        let (a, b) = (rng.vec_f32(n), rng.vec_f32(n));
        let (ad, bd) = (ck(DeviceBuffer::from_host(&s, &a), "copy a")?, ck(DeviceBuffer::from_host(&s, &b), "copy b")?);
        let mut cd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; n + 5]), "poison c")?;
        expect_twin(false, "add", || ck(m.add(&s, flat(n), &ad, &bd, &mut cd), "launch add"))?;
        let mut want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        want.extend([f32::NAN; 5]);
        compare("add", &ck(cd.to_host_vec(&s), "copy c")?, &want, same_bits_f32)
    });

    report.check("empty_slices_are_passed_as_a_dangling_pointer", || {
        // Slice pointers are `nonnull` in the kernel: an empty buffer (address 0 on the host)
        // arrives as `abi::EMPTY_SLICE_ADDRESS`, and `add` over empty slices does nothing.
        let empty = || ck(DeviceBuffer::<f32>::from_host(&s, &[]), "empty buffer");
        let (ad, mut cd) = (empty()?, empty()?);
        let mut out = ck(DeviceBuffer::from_host(&s, &[u64::MAX; 4]), "poison out")?;
        ck(m.addresses(&s, flat(1), &ad, &mut cd, &mut out), "launch addresses")?;
        let dangling = oxide_contract::abi::EMPTY_SLICE_ADDRESS;
        compare("addresses", &ck(out.to_host_vec(&s), "copy out")?, &[dangling, 0, dangling, 0], |x, y| x == y)?;
        let bd = empty()?;
        ck(m.add(&s, flat(256), &ad, &bd, &mut cd), "launch add over empty slices")?;
        ck(s.synchronize(), "synchronize after add over empty slices")
    });

    report.check("add_2d_launch_checked_copy", || {
        // The fast copy of `add` assumes a flat launch (it linearises the grid): a 2D grid of 2D
        // blocks takes the checked copy, with the same results.
        let n = 256 * 37 + 11;
        let (a, b) = (rng.vec_f32(n), rng.vec_f32(n));
        let (ad, bd) = (ck(DeviceBuffer::from_host(&s, &a), "copy a")?, ck(DeviceBuffer::from_host(&s, &b), "copy b")?);
        let mut cd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; n]), "poison c")?;
        let blocks = n.div_ceil(128);
        let cfg =
            LaunchConfig { grid_dim: (blocks.div_ceil(2) as u32, 2, 1), block_dim: (64, 2, 1), shared_mem_bytes: 0 };
        expect_twin(false, "add", || ck(m.add(&s, cfg, &ad, &bd, &mut cd), "launch add"))?;
        let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        compare("add", &ck(cd.to_host_vec(&s), "copy c")?, &want, same_bits_f32)
    });

    // The fast copy computes the flat index in 32 bits when the launch has fewer than 2^32
    // threads (`pipeline/flat_index_u32.rs`); with 2^32 or more it takes the checked copy, whose
    // index is 64-bit. Each launch has ~2^32 threads of 1024 per block, all but the first 4096
    // returning at once (a few milliseconds).
    for (name, blocks, twin) in [
        ("grid_just_under_2_pow_32_threads", (1u32 << 22) - 1, true),
        ("grid_over_2_pow_32_threads", (1 << 22) + 1, false),
    ] {
        report.check(name, || {
            let n = 4096;
            let a: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
            let ad = ck(DeviceBuffer::from_host(&s, &a), "copy a")?;
            let mut cd = ck(DeviceBuffer::from_host(&s, &vec![u32::MAX; n]), "poison c")?;
            let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
            expect_twin(twin, "tag_block", || ck(m.tag_block(&s, cfg, &ad, &mut cd, 2), "launch tag_block"))?;
            let tag = |x: u32, block: u32| (x.rotate_left(5) ^ block).rotate_left(5) ^ block;
            let want: Vec<u32> = a.iter().enumerate().map(|(i, &x)| tag(x, (i / 1024) as u32)).collect();
            compare("tag_block", &ck(cd.to_host_vec(&s), "copy c")?, &want, |x, y| x == y)
        });
    }

    report.check("transpose_fast_copy_ragged", || {
        let (w, h) = (100usize, 70usize);
        let input = rng.vec_f32(w * h);
        let id = ck(DeviceBuffer::from_host(&s, &input), "copy input")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; w * h]), "poison out")?;
        let cfg = LaunchConfig {
            grid_dim: (w.div_ceil(TILE) as u32, h.div_ceil(TILE) as u32, 1),
            block_dim: (TILE as u32, BLOCK_ROWS as u32, 1),
            shared_mem_bytes: 0,
        };
        expect_twin(true, "transpose", || {
            ck(b.transpose(&s, cfg, &id, &mut od, w as u32, h as u32), "launch transpose")
        })?;
        let want = transposed(&input, w, h, h, w, w * h);
        compare("transpose", &ck(od.to_host_vec(&s), "copy out")?, &want, same_bits_f32)
    });

    report.check("transpose_checked_copy", || {
        // 64 x 64 declared, 2048-element buffers (h * w > len): one block, the top-left 32 x 32.
        let (w, h, len) = (64usize, 64usize, 2048usize);
        let input = rng.vec_f32(len);
        let id = ck(DeviceBuffer::from_host(&s, &input), "copy input")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; len]), "poison out")?;
        let cfg =
            LaunchConfig { grid_dim: (1, 1, 1), block_dim: (TILE as u32, BLOCK_ROWS as u32, 1), shared_mem_bytes: 0 };
        let launch = || ck(b.transpose(&s, cfg, &id, &mut od, w as u32, h as u32), "launch transpose");
        expect_twin(false, "transpose", launch)?;
        let want = transposed(&input, w, h, TILE, TILE, len);
        compare("transpose", &ck(od.to_host_vec(&s), "copy out")?, &want, same_bits_f32)
    });

    for (n, pad) in [(96usize, 0usize), (70, 26)] {
        // n a multiple of 32: the last stride ends at the row's end. n = 70: it reads 26
        // elements past the row (the next row's, or padding after the last row), all in bounds.
        report.check(&format!("strided_row_sums_fast_copy_n{n}"), || {
            let rows = 37;
            let x = rng.vec_f32(rows * n + pad);
            let xd = ck(DeviceBuffer::from_host(&s, &x), "copy x")?;
            let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; rows * 32]), "poison out")?;
            let cfg = LaunchConfig { grid_dim: (rows as u32, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
            let launch = || ck(m.strided_row_sums(&s, cfg, &xd, &mut od, n as u32), "launch strided_row_sums");
            expect_twin(true, "strided_row_sums", launch)?;
            compare("out", &ck(od.to_host_vec(&s), "copy out")?, &strided_row_sums(&x, rows, n), same_bits_f32)
        });
    }

    stop_check(&mut report, "strided_read_past_the_end_stops_the_kernel", || {
        // n = 70 with one element of padding too few: the last row's last stride reads x[len].
        let (rows, n) = (37usize, 70usize);
        let x = rng.vec_f32(rows * n + 25);
        let xd = ck(DeviceBuffer::from_host(&s, &x), "copy x")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; rows * 32]), "poison out")?;
        let cfg = LaunchConfig { grid_dim: (rows as u32, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
        ck(m.strided_row_sums(&s, cfg, &xd, &mut od, n as u32), "launch strided_row_sums (must be queued)")?;
        expect_bounds_stop(s.synchronize(), "reading x[x.len()]")
    });

    // `n x n` buffers (and `input` longer): the fast copy where `n * n - 2 < input.len()`; for
    // n = 1 (no interior) and n = 2 (no interior either) whichever copy `U` picks.
    // `twin`: whether the launch runs the unchecked twin (`None`: either).
    let stencil = |rng: &mut Lcg, n: usize, in_len: usize, out_len: usize, rows: usize, twin: Option<bool>| {
        let input = dyadic(rng, in_len);
        let id = ck(DeviceBuffer::from_host(&s, &input), "copy input")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f64::NAN; out_len]), "poison out")?;
        let mut launch =
            || ck(b.stencil5(&s, stencil_launch(n, rows), &id, &mut od, n as u32, C0, C1), "launch stencil5");
        match twin {
            Some(twin) => expect_twin(twin, &format!("stencil5 n={n}"), &mut launch)?,
            None => launch()?,
        }
        let want = stencil_ref(&input, n, rows, out_len);
        compare(&format!("stencil5 n={n}"), &ck(od.to_host_vec(&s), "copy out")?, &want, same_bits_f64)
    };
    report.check("stencil5_fast_copy", || {
        for n in [1, 2, 3, 4, 5, 31, 33, 100, 257] {
            stencil(&mut rng, n, n * n, n * n, n, (n > 2).then_some(true))?;
        }
        // `input` longer than `out`: still the fast copy.
        stencil(&mut rng, 37, 37 * 37 + 9, 37 * 37, 37, Some(true))
    });

    report.check("stencil5_checked_copy", || {
        // `input` one short of `n * n` (U fails): the launch stops after row n - 2, whose
        // south neighbours are in row n - 1 (all below n * n - 1).
        let n = 33;
        stencil(&mut rng, n, n * n - 1, n * n, n - 1, Some(false))?;
        // `out` longer than `input` (U fails); rows 0..n exactly (n a multiple of 8).
        let n = 32;
        stencil(&mut rng, n, n * n, n * n + 5, n, Some(false))
    });

    stop_check(&mut report, "stencil5_past_the_end_of_input_stops_the_kernel", || {
        // `input` one short, a launch covering all n rows: the corner `input[n * n - 1]`.
        let n = 33;
        let input = dyadic(&mut rng, n * n - 1);
        let id = ck(DeviceBuffer::from_host(&s, &input), "copy input")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f64::NAN; n * n]), "poison out")?;
        let launch = b.stencil5(&s, stencil_launch(n, n), &id, &mut od, n as u32, C0, C1);
        ck(launch, "launch stencil5 (must be queued)")?;
        expect_bounds_stop(s.synchronize(), "reading input[input.len()]")
    });

    // Last: a trap leaves the context unusable.
    report.check("add_past_the_end_of_a_stops_the_kernel", || {
        let n = 256 * 37;
        let (a, b) = (rng.vec_f32(n), rng.vec_f32(n + 1));
        let (ad, bd) = (ck(DeviceBuffer::from_host(&s, &a), "copy a")?, ck(DeviceBuffer::from_host(&s, &b), "copy b")?);
        let mut cd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; n + 1]), "poison c")?;
        ck(m.add(&s, flat(n + 1), &ad, &bd, &mut cd), "launch add (must be queued)")?;
        expect_bounds_stop(s.synchronize(), "reading a[a.len()]")
    });

    // Everything again with the kernels' own entry tests choosing (no twins).
    if std::env::var_os(oxide_contract::fast_launch::TWINS_ENV).is_none() && std::env::var_os(CHILD).is_none() {
        report.check("all_checks_again_without_twins", || {
            let exe = ck(std::env::current_exe(), "current_exe")?;
            let out = ck(
                std::process::Command::new(exe).env(oxide_contract::fast_launch::TWINS_ENV, "0").output(),
                "run the child process",
            )?;
            let stdout = String::from_utf8_lossy(&out.stdout);
            println!("    without twins: {}", stdout.lines().last().unwrap_or(""));
            if out.status.success() {
                Ok(())
            } else {
                Err(format!("child process: {}\n{stdout}{}", out.status, String::from_utf8_lossy(&out.stderr)))
            }
        });
    }

    report.finish()
}
