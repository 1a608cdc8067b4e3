//! GPU test: transpose of a 1000 × 777 matrix through a 16 × 17 tile in dynamic shared memory
//! (`LaunchConfig::shared_mem_bytes`), 2D indices from `thread::index_2d`. Random inputs,
//! output poisoned with NaN first, compared element by element.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, shared, sync_threads, thread};

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
        let p = thread::index_2d();
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

struct Lcg(u64);

impl Lcg {
    fn next_f32(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2000.0 - 1000.0
    }
}

fn main() {
    match run() {
        Ok(()) => println!("PASS transpose-dynamic: {ROWS}x{COLS} transpose matches the CPU reference"),
        Err(err) => {
            eprintln!("FAIL transpose-dynamic: {err}");
            std::process::exit(1);
        }
    }
}

fn run() -> Result<(), String> {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    let mut rng = Lcg(seed);
    let input: Vec<f32> = (0..ROWS * COLS).map(|_| rng.next_f32()).collect();
    let mut expected = vec![0f32; ROWS * COLS];
    for r in 0..ROWS {
        for c in 0..COLS {
            expected[c * ROWS + r] = input[r * COLS + c];
        }
    }

    let ctx = CudaContext::new(0).map_err(|e| format!("CudaContext::new(0): {e}"))?;
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).map_err(|e| format!("kernels::load: {e}"))?;
    let in_dev = DeviceBuffer::from_host(&stream, &input).map_err(|e| format!("copy input to the device: {e}"))?;
    let mut out_dev = DeviceBuffer::from_host(&stream, &vec![f32::NAN; ROWS * COLS]).map_err(|e| format!("poison out: {e}"))?;

    let t = kernels::TILE as u32;
    let config = LaunchConfig {
        grid_dim: ((COLS as u32).div_ceil(t), (ROWS as u32).div_ceil(t), 1),
        block_dim: (t, t, 1),
        shared_mem_bytes: (kernels::TILE * kernels::PITCH * 4) as u32,
    };
    module
        .transpose(&stream, config, &in_dev, &mut out_dev, ROWS as u32, COLS as u32)
        .map_err(|e| format!("launch transpose: {e}"))?;
    stream.synchronize().map_err(|e| format!("synchronize after transpose: {e}"))?;
    let out = out_dev.to_host_vec(&stream).map_err(|e| format!("copy out to the host: {e}"))?;

    let wrong: Vec<usize> = (0..out.len()).filter(|&i| out[i].to_bits() != expected[i].to_bits()).collect();
    if let Some(&first) = wrong.first() {
        return Err(format!(
            "{} of {} elements differ (seed {seed}); first at {first} (row {} col {} of the output): gpu {} cpu {}",
            wrong.len(),
            out.len(),
            first / ROWS,
            first % ROWS,
            out[first],
            expected[first]
        ));
    }
    Ok(())
}
