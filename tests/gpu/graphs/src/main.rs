//! GPU test: CUDA graphs. A chain of kernel launches, a memset and a device copy captured from a
//! stream, instantiated and replayed; one kernel node's arguments updated; the whole instance
//! updated from a second capture; a graph keeping a dropped buffer's memory until it is gone;
//! and what a capture refuses (host copies, cudarc slices, the default stream), with the stream
//! usable afterwards. Integer kernels, so every element is compared exactly with the CPU; outputs
//! poisoned first; every CUDA call checked. Exits non-zero on any failure.
use std::sync::Arc;

use cuda_core::graph::NodeKind;
use cuda_core::{CudaContext, CudaStream, DeviceBuffer, DriverError, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare};

#[cuda_module]
mod kernels {
    use super::*;

    /// `x[i] = x[i] * 3 + k` (wrapping).
    #[kernel]
    pub fn step(k: u32, mut x: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        if let Some(v) = x.get_mut(idx) {
            *v = v.wrapping_mul(3).wrapping_add(k);
        }
    }

    /// `acc[i] += x[i]` (wrapping).
    #[kernel]
    pub fn accumulate(x: &[u32], mut acc: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(a) = acc.get_mut(idx) {
            *a = a.wrapping_add(x[i]);
        }
    }
}

const N: usize = 50_021;
const STEPS: usize = 40;
const POISON: u32 = 0xdead_beef;

fn cpu_step(x: &mut [u32], k: u32) {
    for v in x {
        *v = v.wrapping_mul(3).wrapping_add(k);
    }
}

fn cpu_accumulate(x: &[u32], acc: &mut [u32]) {
    for (a, v) in acc.iter_mut().zip(x) {
        *a = a.wrapping_add(*v);
    }
}

fn exact(g: &u32, w: &u32) -> bool {
    g == w
}

struct Setup {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: kernels::Module,
}

/// Queues the captured sequence: acc = 0; STEPS times (x = 3x + ks[j]; acc += x); copy = acc.
fn sequence(
    s: &CudaStream,
    module: &kernels::Module,
    ks: &[u32],
    x: &mut DeviceBuffer<u32>,
    acc: &mut DeviceBuffer<u32>,
    copy: &mut DeviceBuffer<u32>,
) -> Result<(), DriverError> {
    let cfg = LaunchConfig::for_num_elems(N as u32);
    acc.set_zero(s)?;
    for &k in ks {
        module.step(s, cfg, k, x)?;
        module.accumulate(s, cfg, x, acc)?;
    }
    copy.copy_from(s, acc)
}

/// The same on the CPU, from `x`.
fn cpu_sequence(ks: &[u32], x: &mut [u32]) -> Vec<u32> {
    let mut acc = vec![0u32; x.len()];
    for &k in ks {
        cpu_step(x, k);
        cpu_accumulate(x, &mut acc);
    }
    acc
}

fn random(rng: &mut Lcg, n: usize) -> Vec<u32> {
    (0..n).map(|_| rng.next_u32()).collect()
}

fn main() {
    let mut report = Report::new("graphs");
    let mut rng = Lcg::from_env_or_clock();
    let Setup { ctx, stream, module } = report.setup(|| {
        let ctx = ck(CudaContext::new(0), "CudaContext::new(0)")?;
        let module = ck(kernels::load(&ctx), "kernels::load")?;
        // Captures need a stream of our own (the legacy default stream cannot be captured).
        let stream = ck(ctx.new_stream(), "new_stream")?;
        Ok(Setup { ctx, stream, module })
    });

    report.check("capture-and-replay", || {
        let ks = random(&mut rng, STEPS);
        let x0 = random(&mut rng, N);
        let mut x = ck(DeviceBuffer::from_host(&stream, &x0), "x to the device")?;
        let mut acc = ck(DeviceBuffer::from_host(&stream, &vec![POISON; N]), "poisoned acc")?;
        let mut copy = ck(DeviceBuffer::from_host(&stream, &vec![POISON; N]), "poisoned copy")?;
        ck(stream.synchronize(), "synchronize uploads")?;
        let graph = ck(stream.capture(|s| sequence(s, &module, &ks, &mut x, &mut acc, &mut copy)), "capture")?;
        // Capturing ran nothing.
        compare("x after capture", &ck(x.to_host_vec(&stream), "x to the host")?, &x0, exact)?;
        compare("copy after capture", &ck(copy.to_host_vec(&stream), "copy")?, &vec![POISON; N], exact)?;
        let kinds: Vec<&NodeKind> = graph.nodes().collect();
        if kinds.len() != 2 + 2 * STEPS || kinds[0] != &NodeKind::Memset || kinds[kinds.len() - 1] != &NodeKind::Memcpy
        {
            return Err(format!("captured nodes: {kinds:?}"));
        }
        if !matches!(kinds[1], NodeKind::Kernel { name } if name == "step") {
            return Err(format!("node 1 is {:?}, expected kernel `step`", kinds[1]));
        }
        let exec = ck(graph.instantiate(), "instantiate")?;
        ck(exec.upload(&stream), "upload")?;
        let mut x_cpu = x0.clone();
        for replay in 0..3 {
            ck(exec.launch(&stream), "launch the graph")?;
            ck(stream.synchronize(), "synchronize after the replay")?;
            let want = cpu_sequence(&ks, &mut x_cpu);
            compare(&format!("acc after replay {replay}"), &ck(acc.to_host_vec(&stream), "acc")?, &want, exact)?;
            compare(&format!("copy after replay {replay}"), &ck(copy.to_host_vec(&stream), "copy")?, &want, exact)?;
            compare(&format!("x after replay {replay}"), &ck(x.to_host_vec(&stream), "x")?, &x_cpu, exact)?;
        }
        Ok(())
    });

    report.check("update-one-kernel", || {
        let ks = random(&mut rng, STEPS);
        let x0 = random(&mut rng, N);
        let mut x = ck(DeviceBuffer::from_host(&stream, &x0), "x")?;
        let mut acc = ck(DeviceBuffer::from_host(&stream, &vec![POISON; N]), "acc")?;
        let mut copy = ck(DeviceBuffer::from_host(&stream, &vec![POISON; N]), "copy")?;
        ck(stream.synchronize(), "synchronize uploads")?;
        let graph = ck(stream.capture(|s| sequence(s, &module, &ks, &mut x, &mut acc, &mut copy)), "capture")?;
        let mut exec = ck(graph.instantiate(), "instantiate")?;
        // Node 1 + 2j is step j: give step 5 another constant.
        let mut ks2 = ks.clone();
        ks2[5] = rng.next_u32();
        let node = 1 + 2 * 5;
        ck(
            exec.update_kernel(node, &stream, |s| {
                module.step(s, LaunchConfig::for_num_elems(N as u32), ks2[5], &mut x)
            }),
            "update_kernel",
        )?;
        ck(exec.launch(&stream), "launch")?;
        ck(stream.synchronize(), "synchronize")?;
        let mut x_cpu = x0.clone();
        let want = cpu_sequence(&ks2, &mut x_cpu);
        compare("acc", &ck(acc.to_host_vec(&stream), "acc")?, &want, exact)?;
        compare("x", &ck(x.to_host_vec(&stream), "x")?, &x_cpu, exact)?;
        // Wrong node kinds and closures are refused with a reason.
        let msg = match exec.update_kernel(0, &stream, |_| Ok(())) {
            Ok(()) => return Err("update_kernel of the memset node succeeded".into()),
            Err(e) => e.to_string(),
        };
        if !msg.contains("not a kernel launch") {
            return Err(format!("update_kernel(0): {msg}"));
        }
        let cfg = LaunchConfig::for_num_elems(N as u32);
        let msg = match exec.update_kernel(1, &stream, |s| module.accumulate(s, cfg, &x, &mut acc)) {
            Ok(()) => return Err("update_kernel of `step` with an `accumulate` launch succeeded".into()),
            Err(e) => e.to_string(),
        };
        if !msg.contains("launches kernel `step`") {
            return Err(format!("update_kernel(1) with another kernel: {msg}"));
        }
        Ok(())
    });

    report.check("update-whole-graph", || {
        let ks = random(&mut rng, STEPS);
        let (x0, y0) = (random(&mut rng, N), random(&mut rng, N));
        let mut x = ck(DeviceBuffer::from_host(&stream, &x0), "x")?;
        let mut acc = ck(DeviceBuffer::from_host(&stream, &vec![POISON; N]), "acc")?;
        let mut copy = ck(DeviceBuffer::from_host(&stream, &vec![POISON; N]), "copy")?;
        let mut y = ck(DeviceBuffer::from_host(&stream, &y0), "y")?;
        let mut acc2 = ck(DeviceBuffer::from_host(&stream, &vec![POISON; N]), "acc2")?;
        let mut copy2 = ck(DeviceBuffer::from_host(&stream, &vec![POISON; N]), "copy2")?;
        ck(stream.synchronize(), "synchronize uploads")?;
        let first = ck(stream.capture(|s| sequence(s, &module, &ks, &mut x, &mut acc, &mut copy)), "capture 1")?;
        let mut exec = ck(first.instantiate(), "instantiate")?;
        let ks2 = random(&mut rng, STEPS);
        let second = ck(stream.capture(|s| sequence(s, &module, &ks2, &mut y, &mut acc2, &mut copy2)), "capture 2")?;
        ck(exec.update(&second), "update from the second capture")?;
        ck(exec.launch(&stream), "launch")?;
        ck(stream.synchronize(), "synchronize")?;
        let mut y_cpu = y0.clone();
        let want = cpu_sequence(&ks2, &mut y_cpu);
        compare("copy2", &ck(copy2.to_host_vec(&stream), "copy2")?, &want, exact)?;
        compare("y", &ck(y.to_host_vec(&stream), "y")?, &y_cpu, exact)?;
        // The first capture's buffers are untouched.
        compare("x", &ck(x.to_host_vec(&stream), "x")?, &x0, exact)?;
        compare("copy", &ck(copy.to_host_vec(&stream), "copy")?, &vec![POISON; N], exact)?;
        // Another shape is refused, saying why.
        let shorter =
            ck(stream.capture(|s| sequence(s, &module, &ks2[..3], &mut y, &mut acc2, &mut copy2)), "capture 3")?;
        match exec.update(&shorter) {
            Ok(()) => Err("update from a graph of other operations succeeded".into()),
            Err(e) if e.to_string().contains("instantiate the new graph") => Ok(()),
            Err(e) => Err(format!("update's error: {e}")),
        }
    });

    report.check("fork-join-in-capture", || {
        // A second stream joins the capture through an event and is joined back: its launch is
        // recorded (and kept alive) like the capturing stream's.
        let side = ck(ctx.new_stream(), "side stream")?;
        let (fork, join) = (ck(ctx.new_event(None), "event")?, ck(ctx.new_event(None), "event")?);
        let k = rng.next_u32();
        let x0 = random(&mut rng, N);
        let mut x = ck(DeviceBuffer::from_host(&stream, &x0), "x")?;
        let mut acc = ck(DeviceBuffer::from_host(&stream, &vec![POISON; N]), "acc")?;
        ck(stream.synchronize(), "synchronize uploads")?;
        let cfg = LaunchConfig::for_num_elems(N as u32);
        let graph = ck(
            stream.capture(|s| {
                acc.set_zero(s)?;
                fork.record(s)?;
                side.wait_event(&fork)?;
                module.step(&side, cfg, k, &mut x)?;
                join.record(&side)?;
                s.wait_event(&join)?;
                module.accumulate(s, cfg, &x, &mut acc)
            }),
            "capture over two streams",
        )?;
        let kinds: Vec<&NodeKind> = graph.nodes().collect();
        if kinds.len() != 3 || !matches!(kinds[1], NodeKind::Kernel { name } if name == "step") {
            return Err(format!("captured nodes: {kinds:?}"));
        }
        let exec = ck(graph.instantiate(), "instantiate")?;
        let mut x_cpu = x0.clone();
        for replay in 0..2 {
            ck(exec.launch(&stream), "launch")?;
            ck(stream.synchronize(), "synchronize")?;
            cpu_step(&mut x_cpu, k);
            compare(&format!("acc after replay {replay}"), &ck(acc.to_host_vec(&stream), "acc")?, &x_cpu, exact)?;
        }
        Ok(())
    });

    report.check("graph-keeps-memory", || {
        // 1 GiB that the graph uses: dropping the buffer must not free it while the graph lives.
        const BIG: usize = 1 << 28; // u32s
        let free = |what: &str| ck(ctx.cudarc().mem_get_info(), what).map(|(free, _)| free);
        let before = free("mem_get_info before")?;
        let mut big = ck(DeviceBuffer::<u32>::zeroed(&stream, BIG), "allocate 1 GiB")?;
        let x0 = random(&mut rng, N);
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![POISON; N]), "poisoned out")?;
        let x = ck(DeviceBuffer::from_host(&stream, &x0), "x")?;
        let mut y = ck(DeviceBuffer::from_host(&stream, &vec![POISON; N]), "y")?;
        ck(stream.synchronize(), "synchronize")?;
        let graph = ck(
            stream.capture(|s| {
                big.set_zero(s)?;
                y.copy_from(s, &x)?;
                out.copy_from(s, &y)
            }),
            "capture",
        )?;
        let exec = ck(graph.instantiate(), "instantiate")?;
        // The graph reads and writes these on every replay.
        drop(big);
        drop(x);
        drop(y);
        let after_drop = free("mem_get_info after dropping the buffer")?;
        if after_drop > before.saturating_sub(BIG * 4 / 2) {
            return Err(format!("1 GiB was freed while the graph still uses it ({before} -> {after_drop} bytes free)"));
        }
        ck(exec.launch(&stream), "launch after the drop")?;
        ck(stream.synchronize(), "synchronize")?;
        compare("out", &ck(out.to_host_vec(&stream), "out")?, &x0, exact)?;
        drop(exec);
        drop(graph);
        let after_graph = free("mem_get_info after dropping the graph")?;
        if after_graph < after_drop + BIG * 4 / 2 {
            return Err(format!(
                "dropping the graph did not free the 1 GiB ({after_drop} -> {after_graph} bytes free)"
            ));
        }
        Ok(())
    });

    report.check("capture-refusals", || {
        let mut buf = ck(DeviceBuffer::<u32>::zeroed(&stream, 16), "buffer")?;
        let expect = |result: Result<cuda_core::Graph, DriverError>, text: &str, what: &str| match result {
            Ok(_) => Err(format!("{what}: captured")),
            Err(e) if e.to_string().contains(text) => Ok(()),
            Err(e) => Err(format!("{what}: the error does not say `{text}`: {e}")),
        };
        expect(stream.capture(|s| buf.copy_from_host(s, &[1; 16])), "cannot be captured", "a host copy")?;
        expect(ctx.default_stream().capture(|_| Ok(())), "legacy default stream", "the default stream")?;
        // cudarc slices cannot be kept alive by the graph (event tracking off: cudarc's
        // cross-stream waits are not capturable).
        let theirs = ctx.cudarc();
        // SAFETY: the slices below are used on one stream only.
        unsafe { theirs.disable_event_tracking() };
        let xs = ck(stream.cudarc().clone_htod(&[2u32; 16]), "cudarc x")?;
        let mut ys = ck(stream.cudarc().clone_htod(&[POISON; 16]), "cudarc y")?;
        // SAFETY: restores the default for later allocations.
        unsafe { theirs.enable_event_tracking() };
        let cfg = LaunchConfig::for_num_elems(16);
        expect(stream.capture(|s| module.accumulate(s, cfg, &xs, &mut ys)), "cannot keep alive", "a cudarc slice")?;
        // The stream is usable after failed captures.
        ck(module.accumulate(&stream, cfg, &xs, &mut ys), "launch after the refusals")?;
        ck(stream.synchronize(), "synchronize")?;
        compare("y", &ck(stream.cudarc().clone_dtoh(&ys), "y")?, &[POISON.wrapping_add(2); 16], exact)?;
        // Vouched for: capture_unchecked takes them.
        // SAFETY: `xs` and `ys` outlive the graph and its instance (dropped at the end of this check).
        let graph = ck(
            unsafe { stream.capture_unchecked(Default::default(), |s| module.accumulate(s, cfg, &xs, &mut ys)) },
            "capture_unchecked",
        )?;
        let exec = ck(graph.instantiate(), "instantiate")?;
        ck(exec.launch(&stream), "launch")?;
        ck(stream.synchronize(), "synchronize")?;
        drop(exec);
        compare("y after the replay", &ck(stream.cudarc().clone_dtoh(&ys), "y")?, &[POISON.wrapping_add(4); 16], exact)
    });

    report.finish()
}
