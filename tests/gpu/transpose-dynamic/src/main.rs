//! GPU test: transpose of a 1000 × 777 matrix through a 16 × 17 tile in dynamic shared memory
//! (`LaunchConfig::shared_mem_bytes`), 2D indices from `thread::index_2d_xy`. Random inputs,
//! output poisoned with NaN first, compared element by element.
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, shared, sync_threads, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, same_bits_f32};

#[cuda_module]
mod kernels {
    use super::*;

    pub const TILE: usize = 16;
    pub const PITCH: usize = TILE + 1;

    /// `input` is `rows × cols`, `out` is `cols × rows`, both row-major.
    #[kernel]
    pub fn transpose(input: &[f32], out: &mut [f32], rows: u32, cols: u32) {
        let tile = shared::dynamic::<f32>();
        let (rows, cols) = (rows as usize, cols as usize);
        let (tx, ty) = (thread::threadIdx_x() as usize, thread::threadIdx_y() as usize);
        let p = thread::index_2d_xy();
        if p.x() < cols && p.y() < rows {
            // SAFETY: each thread writes its own tile slot before the barrier.
            unsafe { tile.write(ty * PITCH + tx, input[p.y() * cols + p.x()]) };
        }
        sync_threads();
        let out_col = thread::blockIdx_y() as usize * TILE + tx;
        let out_row = thread::blockIdx_x() as usize * TILE + ty;
        if out_col < rows && out_row < cols {
            // SAFETY: the tile is only read after the barrier.
            out[out_row * rows + out_col] = unsafe { tile.read(tx * PITCH + ty) };
        }
    }
}

const ROWS: usize = 1000;
const COLS: usize = 777;

fn main() {
    let mut report = Report::new("transpose-dynamic");
    let mut rng = Lcg::from_env_or_clock();
    let (_ctx, stream, module) = report.load(kernels::load);

    // Element `i` of the output is row `i / ROWS`, column `i % ROWS`.
    report.check("transpose", || {
        let input = rng.vec_f32(ROWS * COLS);
        let mut expected = vec![0f32; ROWS * COLS];
        for r in 0..ROWS {
            for c in 0..COLS {
                expected[c * ROWS + r] = input[r * COLS + c];
            }
        }

        let in_dev = ck(DeviceBuffer::from_host(&stream, &input), "copy input to the device")?;
        let mut out_dev = ck(DeviceBuffer::from_host(&stream, &vec![f32::NAN; ROWS * COLS]), "poison out")?;
        let t = kernels::TILE as u32;
        let config = LaunchConfig {
            grid_dim: ((COLS as u32).div_ceil(t), (ROWS as u32).div_ceil(t), 1),
            block_dim: (t, t, 1),
            shared_mem_bytes: (kernels::TILE * kernels::PITCH * 4) as u32,
        };
        ck(module.transpose(&stream, config, &in_dev, &mut out_dev, ROWS as u32, COLS as u32), "launch transpose")?;
        ck(stream.synchronize(), "synchronize after transpose")?;
        compare("transposed", &ck(out_dev.to_host_vec(&stream), "copy out to the host")?, &expected, same_bits_f32)
    });

    report.finish()
}
