//! GPU test: `gpu_printf!` with integers (32- and 64-bit, signed, hex), floats, `bool`, a `%s`
//! string and `%%`, in a C-style format and in a Rust-style one (`{}`, `{:x}`, `{:#x}`, `{:.2}`,
//! widths and alignment, `bool` as `true`/`false`, `char`). The binary runs itself as a child process, captures the child's stdout (where
//! the driver writes device printf output at synchronization), and compares the lines, sorted,
//! with the ones the CPU expects.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, gpu_printf, kernel, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn say(x: &[i32], scale: f32) {
        let i = thread::index_1d().get();
        if i < x.len() {
            let v = x[i];
            gpu_printf!(
                "line %u/%u: v=%d hex=%x big=%ld f=%.2f d=%.3e ok=%d %s 100%%\n",
                thread::blockIdx_x(),
                thread::threadIdx_x(),
                v,
                v as u32,
                (v as i64) << 33,
                v as f32 * scale,
                (v / 10) as f64,
                v > 0,
                c"oxide"
            );
        }
    }

    /// The same kind of line with Rust-style placeholders.
    #[kernel]
    pub fn say_rust(x: &[i32], scale: f32) {
        let i = thread::index_1d().get();
        if i < x.len() {
            let v = x[i];
            gpu_printf!(
                "rust {}/{}: v={} hex={:x} pre={:#x} big={} f={} g={:.2} ok={} c={} w=[{:>6}] l=[{:<4}] 100% {{}}\n",
                thread::blockIdx_x(),
                thread::threadIdx_x(),
                v,
                v as u32,
                v as u32,
                (v as i64) << 33,
                v as f32 * scale,
                (v / 10) as f64,
                v > 0,
                'R',
                v,
                (v % 100) as i8
            );
        }
    }
}

const N: usize = 96;
const CHILD_ENV: &str = "GPU_PRINTF_CHILD";

fn inputs(seed: u64) -> Vec<i32> {
    let mut rng = Lcg(seed);
    (0..N).map(|_| (rng.next_u32() % 20001) as i32 - 10000).collect()
}

/// What C's printf prints for `%.3e` (Rust's `{:e}` has no `+`/two-digit exponent).
fn c_exp(v: f64) -> String {
    let s = format!("{v:.3e}");
    let (mantissa, exp) = s.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("exponent is an integer");
    format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

fn expected(x: &[i32]) -> Vec<String> {
    let mut lines: Vec<String> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            format!(
                "line {}/{}: v={v} hex={:x} big={} f={:.2} d={} ok={} oxide 100%",
                i / 64,
                i % 64,
                v as u32,
                (v as i64) << 33,
                v as f32 * 0.25,
                c_exp((v / 10) as f64),
                (v > 0) as i32
            )
        })
        .collect();
    lines.extend(x.iter().enumerate().map(|(i, &v)| {
        format!(
            "rust {}/{}: v={v} hex={:x} pre={:#x} big={} f={} g={:.2} ok={} c=R w=[{:>6}] l=[{:<4}] 100% {{}}",
            i / 64,
            i % 64,
            v as u32,
            v as u32,
            (v as i64) << 33,
            v as f32 * 0.25,
            (v / 10) as f64,
            v > 0,
            v,
            (v % 100) as i8
        )
    }));
    lines.sort();
    lines
}

fn main() {
    // The child prints nothing but the kernel's lines: no seed line, no PASS/FAIL.
    if let Ok(seed) = std::env::var(CHILD_ENV) {
        if let Err(err) = child(seed.parse().unwrap_or(1)) {
            eprintln!("child: {err}");
            std::process::exit(2);
        }
        return;
    }
    let mut report = Report::new("printf");
    let seed = harness::seed_from_env_or_clock();
    report.check("lines_match", || parent(seed));
    report.finish()
}

fn child(seed: u64) -> Result<(), String> {
    let x = inputs(seed);
    let ctx = ck(CudaContext::new(0), "CudaContext::new(0)")?;
    let stream = ctx.default_stream();
    let module = ck(kernels::load(&ctx), "kernels::load")?;
    let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
    let config = LaunchConfig { grid_dim: (2, 1, 1), block_dim: (64, 1, 1), shared_mem_bytes: 0 };
    ck(module.say(&stream, config, &x_dev, 0.25), "launch say")?;
    ck(module.say_rust(&stream, config, &x_dev, 0.25), "launch say_rust")?;
    ck(stream.synchronize(), "synchronize after say")?;
    ck(ctx.synchronize(), "context synchronize")
}

fn parent(seed: u64) -> Result<(), String> {
    let exe = ck(std::env::current_exe(), "path of this binary")?;
    let out = ck(std::process::Command::new(exe).env(CHILD_ENV, seed.to_string()).output(), "run the child")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("child failed ({}): {}{}", out.status, stdout, String::from_utf8_lossy(&out.stderr)));
    }
    let mut got: Vec<String> = stdout.lines().map(str::to_string).collect();
    got.sort();
    let want = expected(&inputs(seed));
    if got != want {
        let first = got.iter().zip(&want).position(|(g, w)| g != w).unwrap_or(got.len().min(want.len()));
        return Err(format!(
            "{} lines printed, {} expected; first difference (sorted) at {first}:\n  gpu: {:?}\n  cpu: {:?}",
            got.len(),
            want.len(),
            got.get(first),
            want.get(first)
        ));
    }
    Ok(())
}
