//! GPU test of the deferred bounds checks (codegen-driver/src/lower/bounds.rs): indexing in
//! guarded, unrolled loops (the transpose pattern, also through a `Matrix` view) and gathers
//! through random in-bounds indices
//! give exactly the CPU's results; an out-of-bounds index whose element is never read still
//! stops the kernel (the deferred trap at the function's end), reported at synchronize. That
//! check runs last: a trap leaves the context unusable.
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::matrix::Matrix;
use cuda_device::{DisjointSlice, SharedMemory, cuda_module, kernel, launch_bounds, sync_threads, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, expect_bounds_stop, same_bits_f32};

const TILE: usize = 32;

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn gather(idx: &[u32], x: &[f32], mut out: DisjointSlice<f32>) {
        let i = thread::index_1d();
        if let Some(o) = out.get_mut(i) {
            *o = x[idx[i.get()] as usize] + x[i.get()];
        }
    }

    /// The bench's transpose with `usize` indices: guarded, unrolled accesses of both slices and
    /// of the shared tile, all bounds-checked.
    #[kernel]
    #[launch_bounds(256)]
    pub fn transpose(input: &[f32], out: &mut [f32], width: u32, height: u32) {
        static T: SharedMemory<f32, { TILE * (TILE + 1) }> = SharedMemory::UNINIT;
        let (w, h) = (width as usize, height as usize);
        let (tx, ty) = (thread::threadIdx_x() as usize, thread::threadIdx_y() as usize);
        let (bx, by) = (thread::blockIdx_x() as usize, thread::blockIdx_y() as usize);
        let (x, y) = (bx * TILE + tx, by * TILE + ty);
        let mut j = 0;
        while j < TILE {
            if x < w && y + j < h {
                // SAFETY: each thread writes its own slots before the barrier.
                unsafe { T.write((ty + j) * (TILE + 1) + tx, input[(y + j) * w + x]) };
            }
            j += 8;
        }
        sync_threads();
        let (x, y) = (by * TILE + tx, bx * TILE + ty);
        let mut j = 0;
        while j < TILE {
            if x < h && y + j < w {
                // SAFETY: read after the barrier.
                out[(y + j) * h + x] = unsafe { T.read(tx * (TILE + 1) + ty + j) };
            }
            j += 8;
        }
    }

    /// The same transpose reading through a `Matrix` view: the edge guard is the bounds check.
    #[kernel]
    #[launch_bounds(256)]
    pub fn transpose_view(input: &[f32], out: &mut [f32], width: u32, height: u32) {
        static T: SharedMemory<f32, { TILE * (TILE + 1) }> = SharedMemory::UNINIT;
        let (w, h) = (width as usize, height as usize);
        let Some(m) = Matrix::new(input, h, w) else { return };
        let (tx, ty) = (thread::threadIdx_x() as usize, thread::threadIdx_y() as usize);
        let (bx, by) = (thread::blockIdx_x() as usize, thread::blockIdx_y() as usize);
        let (x, y) = (bx * TILE + tx, by * TILE + ty);
        let mut j = 0;
        while j < TILE {
            if x < w && y + j < h {
                // SAFETY: each thread writes its own slots before the barrier.
                unsafe { T.write((ty + j) * (TILE + 1) + tx, m[(y + j, x)]) };
            }
            j += 8;
        }
        sync_threads();
        let (x, y) = (by * TILE + tx, bx * TILE + ty);
        let mut j = 0;
        while j < TILE {
            if x < h && y + j < w {
                // SAFETY: read after the barrier.
                out[(y + j) * h + x] = unsafe { T.read(tx * (TILE + 1) + ty + j) };
            }
            j += 8;
        }
    }

    /// Takes the address of an element past the end without reading it, then runs a loop
    /// without checks (its pending trap is placed before the loop, not in it).
    #[kernel]
    pub fn oob_reference(a: &[f32], out: &mut [u64]) {
        let i = thread::index_1d().get();
        if i < out.len() {
            let r = &a[i + a.len()];
            let mut acc = 0u64;
            for k in 0..out.len() as u64 {
                acc = acc.wrapping_mul(31).wrapping_add(k);
            }
            out[i] = ((r as *const f32 as u64) & 1) | (acc << 1);
        }
    }
}

fn main() {
    let mut report = Report::new("bounds-traps");
    let mut rng = Lcg::from_env_or_clock();
    let (_ctx, s, m) = report.load(kernels::load);

    report.check("gather_in_bounds", || {
        let n = 100_003;
        let x = rng.vec_f32(n);
        let idx: Vec<u32> = (0..n).map(|_| rng.next_u32() % n as u32).collect();
        let (xd, id) =
            (ck(DeviceBuffer::from_host(&s, &x), "copy x")?, ck(DeviceBuffer::from_host(&s, &idx), "copy idx")?);
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; n]), "poison out")?;
        ck(m.gather(&s, LaunchConfig::for_num_elems(n as u32), &id, &xd, &mut od), "launch gather")?;
        let want: Vec<f32> = (0..n).map(|i| x[idx[i] as usize] + x[i]).collect();
        compare("gather", &ck(od.to_host_vec(&s), "copy out")?, &want, same_bits_f32)
    });

    report.check("transpose_ragged_edges", || {
        // Not multiples of 32: the guards cut every edge tile.
        let (w, h) = (1000usize, 777usize);
        let x = rng.vec_f32(w * h);
        let xd = ck(DeviceBuffer::from_host(&s, &x), "copy x")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; w * h]), "poison out")?;
        let cfg = LaunchConfig {
            grid_dim: (w.div_ceil(TILE) as u32, h.div_ceil(TILE) as u32, 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        ck(m.transpose(&s, cfg, &xd, &mut od, w as u32, h as u32), "launch transpose")?;
        let mut want = vec![0f32; w * h];
        for r in 0..h {
            for c in 0..w {
                want[c * h + r] = x[r * w + c];
            }
        }
        compare("transpose", &ck(od.to_host_vec(&s), "copy out")?, &want, same_bits_f32)?;
        let mut ov = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; w * h]), "poison out")?;
        ck(m.transpose_view(&s, cfg, &xd, &mut ov, w as u32, h as u32), "launch transpose_view")?;
        compare("transpose_view", &ck(ov.to_host_vec(&s), "copy out")?, &want, same_bits_f32)
    });

    // Last: a trap leaves the context unusable.
    report.check("unread_out_of_bounds_index_still_traps", || {
        let n = 4096;
        let ad = ck(DeviceBuffer::from_host(&s, &vec![1.0f32; n]), "copy a")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![7u64; n]), "poison out")?;
        ck(
            m.oob_reference(&s, LaunchConfig::for_num_elems(n as u32), &ad, &mut od),
            "launch oob_reference (must be queued)",
        )?;
        expect_bounds_stop(s.synchronize(), "taking an out-of-bounds element's address")
    });

    report.finish()
}
