//! GPU test: launches that must fail, and fail helpfully. Each invalid `LaunchConfig` is rejected
//! before the launch with a message naming the field and the limit (and the output stays
//! poisoned); a `#[launch_bounds]` kernel launched with too many threads gets a clear error; an
//! unknown entry lists the module's kernels; a kernel reading out of bounds stops (it faults at the
//! poisoned address, or traps), and the error
//! surfaces at synchronize as a `DriverError` with the guide's hint. The trap poisons the
//! context, so it runs last.
use cuda_core::{DeviceBuffer, DriverError, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, launch_bounds, thread};
use cuda_host::cuda_launch;

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn fill(value: u32, mut out: DisjointSlice<u32>) {
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = value;
        }
    }

    #[kernel]
    #[launch_bounds(128)]
    pub fn bounded(value: u32, mut out: DisjointSlice<u32>) {
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = value;
        }
    }

    /// A 16 KB per-thread array indexed by data, so it lives in local memory: more than the
    /// default 1 KB stack, which the launch raises.
    #[kernel]
    pub fn big_local(seeds: &[u32], mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            let mut table = [0u32; 4096];
            let mut x = seeds[i];
            for slot in table.iter_mut() {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                *slot = x;
            }
            let mut acc = 0u32;
            for _ in 0..64 {
                acc = acc.wrapping_add(table[(x % 4096) as usize]);
                x = x.rotate_left(7) ^ acc;
            }
            *o = acc;
        }
    }

    /// Every thread reads past the end of `a`: the bounds check traps.
    #[kernel]
    pub fn out_of_bounds(a: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = a[i + a.len()];
        }
    }
}

const N: usize = 4096;
const POISON: u32 = 0xdead_beef;

fn cfg(grid: (u32, u32, u32), block: (u32, u32, u32), shared: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: grid, block_dim: block, shared_mem_bytes: shared }
}

/// The error must be a host-side `InvalidConfig` (no launch happened) containing every `needle`.
fn expect_rejected(result: Result<(), DriverError>, needles: &[&str]) -> Result<String, String> {
    match result {
        Ok(()) => Err("the launch was accepted".into()),
        Err(e @ DriverError::InvalidConfig { .. }) => {
            let text = e.to_string();
            for n in needles {
                if !text.contains(n) {
                    return Err(format!("message lacks {n:?}: {text}"));
                }
            }
            Ok(text)
        }
        Err(other) => Err(format!("expected a host-side rejection, got: {other}")),
    }
}

fn main() {
    let mut report = Report::new("launch-errors");
    let mut rng = Lcg::from_env_or_clock();
    let (ctx, stream, module) = report.load(kernels::load);
    let s = &stream;
    let m = &module;
    let optin = ctx.max_shared_memory_per_block_optin();

    let cases: Vec<(&str, LaunchConfig, Vec<String>)> = vec![
        ("grid_x_zero", cfg((0, 1, 1), (256, 1, 1), 0), vec!["grid_dim.x is 0".into()]),
        ("grid_y_zero", cfg((1, 0, 1), (256, 1, 1), 0), vec!["grid_dim.y is 0".into()]),
        ("grid_z_zero", cfg((1, 1, 0), (256, 1, 1), 0), vec!["grid_dim.z is 0".into()]),
        ("block_x_zero", cfg((1, 1, 1), (0, 1, 1), 0), vec!["block_dim.x is 0".into()]),
        ("block_y_zero", cfg((1, 1, 1), (1, 0, 1), 0), vec!["block_dim.y is 0".into()]),
        ("block_z_zero", cfg((1, 1, 1), (1, 1, 0), 0), vec!["block_dim.z is 0".into()]),
        ("block_x_over_1024", cfg((1, 1, 1), (2048, 1, 1), 0), vec!["block_dim.x is 2048; the limit is 1024".into()]),
        ("block_z_over_64", cfg((1, 1, 1), (1, 1, 65), 0), vec!["block_dim.z is 65; the limit is 64".into()]),
        (
            "threads_per_block_over_1024",
            cfg((1, 1, 1), (64, 32, 1), 0),
            vec!["2048 threads per block; the limit is 1024".into()],
        ),
        (
            "grid_x_over_limit",
            cfg((1 << 31, 1, 1), (1, 1, 1), 0),
            vec!["grid_dim.x is 2147483648; the limit is 2147483647".into()],
        ),
        (
            "grid_y_over_65535",
            cfg((1, 65_536, 1), (1, 1, 1), 0),
            vec!["grid_dim.y is 65536; the limit is 65535".into()],
        ),
        (
            "grid_z_over_65535",
            cfg((1, 1, 70_000), (1, 1, 1), 0),
            vec!["grid_dim.z is 70000; the limit is 65535".into()],
        ),
        (
            "shared_mem_over_device_limit",
            cfg((1, 1, 1), (256, 1, 1), optin + 1024),
            vec![format!("shared_mem_bytes is {}", optin + 1024), format!("at most {optin} bytes")],
        ),
    ];
    for (name, config, needles) in cases {
        report.check(&format!("rejects_{name}"), || {
            let mut out = ck(DeviceBuffer::from_host(s, &vec![POISON; N]), "poison out")?;
            let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
            let text = expect_rejected(m.fill(s, config, 7, &mut out), &needles)?;
            ck(s.synchronize(), "synchronize after the rejected launch")?;
            compare(
                "output after a rejected launch",
                &ck(out.to_host_vec(s), "copy out back")?,
                &vec![POISON; N],
                |a, b| a == b,
            )?;
            println!("    {name}: {}", text.lines().next().unwrap_or(""));
            Ok(())
        });
    }

    report.check("shared_mem_opt_in_within_limit_runs", || {
        let value = rng.next_u64() as u32;
        let mut out = ck(DeviceBuffer::from_host(s, &vec![POISON; N]), "poison out")?;
        let config = cfg(((N / 256) as u32, 1, 1), (256, 1, 1), optin);
        ck(m.fill(s, config, value, &mut out), "launch fill with opt-in shared memory")?;
        ck(s.synchronize(), "synchronize after fill")?;
        compare("fill", &ck(out.to_host_vec(s), "copy out back")?, &vec![value; N], |a, b| a == b)
    });

    report.check("launch_bounds_exceeded", || {
        let mut out = ck(DeviceBuffer::from_host(s, &vec![POISON; N]), "poison out")?;
        let text = expect_rejected(
            m.bounded(s, LaunchConfig::for_num_elems(N as u32), 1, &mut out),
            &["256 threads per block", "#[launch_bounds(128)]", "use at most 128 threads"],
        )?;
        println!("    {}", text.lines().next().unwrap_or(""));
        // Through cuda_launch! the manifest's launch bounds are checked the same way.
        let text = expect_rejected(
            cuda_launch! {
                kernel: bounded,
                stream: s,
                module: m.kernels(),
                config: LaunchConfig::for_num_elems(N as u32),
                args: [1u32, slice_mut(out)]
            },
            &["#[launch_bounds(128)]"],
        )?;
        println!("    cuda_launch!: {}", text.lines().next().unwrap_or(""));
        ck(s.synchronize(), "synchronize")?;
        compare(
            "output after the rejected launch",
            &ck(out.to_host_vec(s), "copy out back")?,
            &vec![POISON; N],
            |a, b| a == b,
        )
    });

    report.check("launch_bounds_within_limit_runs", || {
        let value = rng.next_u64() as u32;
        let mut out = ck(DeviceBuffer::from_host(s, &vec![POISON; N]), "poison out")?;
        let config = cfg(((N / 128) as u32, 1, 1), (128, 1, 1), 0);
        ck(m.bounded(s, config, value, &mut out), "launch bounded with 128 threads")?;
        ck(s.synchronize(), "synchronize after bounded")?;
        compare("bounded", &ck(out.to_host_vec(s), "copy out back")?, &vec![value; N], |a, b| a == b)
    });

    report.check("large_local_memory_raises_the_stack", || {
        let n = 2048usize;
        let seeds: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let cpu = |seed: u32| {
            let mut table = [0u32; 4096];
            let mut x = seed;
            for slot in table.iter_mut() {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                *slot = x;
            }
            let mut acc = 0u32;
            for _ in 0..64 {
                acc = acc.wrapping_add(table[(x % 4096) as usize]);
                x = x.rotate_left(7) ^ acc;
            }
            acc
        };
        let seeds_dev = ck(DeviceBuffer::from_host(s, &seeds), "copy seeds")?;
        let mut out = ck(DeviceBuffer::from_host(s, &vec![POISON; n]), "poison out")?;
        let f = ck(m.kernels().function_named("big_local"), "look up big_local")?;
        let attrs = ck(f.attributes(), "big_local's attributes")?;
        println!(
            "    big_local: {} bytes of local memory per thread, {} registers",
            attrs.local_bytes, attrs.registers
        );
        if attrs.local_bytes < 16 * 1024 {
            return Err(format!(
                "expected the 16 KB table in local memory, the kernel has {} bytes",
                attrs.local_bytes
            ));
        }
        ck(m.big_local(s, LaunchConfig::for_num_elems(n as u32), &seeds_dev, &mut out), "launch big_local")?;
        ck(s.synchronize(), "synchronize after big_local")?;
        let stack = ck(s.context().stack_size(), "stack size")?;
        if stack < attrs.local_bytes as usize {
            return Err(format!("the stack is {stack} bytes, less than the kernel's {}", attrs.local_bytes));
        }
        let want: Vec<u32> = seeds.iter().map(|&x| cpu(x)).collect();
        compare("big_local", &ck(out.to_host_vec(s), "copy out back")?, &want, |a, b| a == b)
    });

    report.check("unknown_entry_lists_kernels", || match m.kernels().function_named("fil") {
        Ok(_) => Err("found an entry `fil`".into()),
        Err(e) => {
            let text = e.to_string();
            for needle in ["CUDA_ERROR_NOT_FOUND", "`fil`", "fill", "bounded", "out_of_bounds", "likely cause"] {
                if !text.contains(needle) {
                    return Err(format!("message lacks {needle:?}: {text}"));
                }
            }
            println!("    {}", text.lines().next().unwrap_or(""));
            Ok(())
        }
    });

    report.check("wrong_arguments_to_cuda_launch", || {
        let mut out = ck(DeviceBuffer::<u32>::zeroed(s, N), "alloc out")?;
        let r = cuda_launch! {
            kernel: fill,
            stream: s,
            module: m.kernels(),
            config: LaunchConfig::for_num_elems(N as u32),
            args: [slice_mut(out)]
        };
        match r {
            Err(e @ DriverError::ArgumentMismatch { .. })
                if e.to_string().contains("takes 2 arguments (value, out)") =>
            {
                println!("    {e}");
                Ok(())
            }
            other => Err(format!("expected an argument mismatch naming (value, out), got {other:?}")),
        }
    });

    // Last: a trap leaves the context unusable.
    report.check("out_of_bounds_trap_surfaces_at_synchronize", || {
        let a = ck(DeviceBuffer::from_host(s, &vec![1.0f32; N]), "copy a")?;
        let mut out = ck(DeviceBuffer::from_host(s, &vec![f32::NAN; N]), "poison out")?;
        ck(
            m.out_of_bounds(s, LaunchConfig::for_num_elems(N as u32), &a, &mut out),
            "launch out_of_bounds (must be queued)",
        )?;
        match s.synchronize() {
            Ok(()) => Err("synchronize succeeded after an out-of-bounds read".into()),
            Err(e) => {
                let text = e.to_string();
                println!("    {}", text.replace('\n', "\n    "));
                // The read of an out-of-bounds element faults at its poisoned address (ILLEGAL_ADDRESS)
                // before the deferred trap (codegen-driver/src/lower/bounds.rs); debug builds trap.
                let trap_codes = [
                    "CUDA_ERROR_ILLEGAL_INSTRUCTION",
                    "CUDA_ERROR_LAUNCH_FAILED",
                    "CUDA_ERROR_ASSERT",
                    "CUDA_ERROR_ILLEGAL_ADDRESS",
                ];
                if !trap_codes.contains(&e.name()) {
                    return Err(format!("expected one of {trap_codes:?}, got {}", e.name()));
                }
                let hint = if e.name() == "CUDA_ERROR_ILLEGAL_ADDRESS" {
                    "likely cause: the kernel accessed memory outside its buffers (an out-of-bounds index"
                } else {
                    "likely cause: the kernel trapped"
                };
                for needle in [hint, "cargo oxide"] {
                    if !text.contains(needle) {
                        return Err(format!("message lacks the guide's hint {needle:?}: {text}"));
                    }
                }
                Ok(())
            }
        }
    });

    report.finish()
}
