//! GPU test: launch contracts and the index spaces that build on them.
//!
//! - `#[launch_contract]` kernels launch through `prepare_<kernel>` + `<kernel>(&stream, &prepared,
//!   ..)`; a config the contract refuses (block shape, dynamic shared memory) fails in `prepare`,
//!   a `requires` relation that does not hold fails before the launch (the output stays
//!   poisoned), and even the raw `_unchecked` path is refused a launch outside the contract's
//!   domain (the kernel's manifest entry carries the contract).
//! - The `u32` launch context (`#[kernel(launch_context = lc)]`, `index_1d_u32`, `coord_2d_u32`)
//!   and the views it unlocks (`element_thread32`, `grid_stride_runs32`, `tile_2d32`) write every
//!   element exactly once.
//! - `DisjointSlice<T, Runtime2DIndex>` gets its row width from `cuda_host::RowWidth` (a third
//!   ABI word); `get_mut_indexed` and `DisjointSlice::from_raw_parts` write their elements; a
//!   nested module's kernels launch through `LoadedModule::from_parent`.
use cuda_core::{DeviceBuffer, LaunchConfig, LaunchConfig1D, LaunchConfig2D, LaunchContractError};
use cuda_device::thread::Runtime2DIndex;
use cuda_device::{DisjointSlice, LinearTiles, RowMajorTiles, cuda_module, kernel, launch_contract, thread};
use cuda_host::RowWidth;

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, same_bits_f32};

/// Poison for outputs: a value no kernel here writes.
const POISON: u32 = 0xdead_beef;

#[cuda_module]
mod kernels {
    use super::*;

    /// `out[i] = input[i] * 3 + i`, through the u32 launch context and an element view.
    #[kernel(launch_context = lc)]
    #[launch_contract(domain = 1, coordinates = u32, block = (64, 1, 1), requires = (input.len() >= out.len()))]
    pub fn triple(input: &[u32], mut out: DisjointSlice<u32>) {
        let i = thread::index_1d_u32(lc);
        if let Some(mut element) = out.element_thread32(i) {
            element.write(input[i.get() as usize].wrapping_mul(3).wrapping_add(i.get()));
        }
    }

    /// Adds 1 to every element, in runs of 4 visited grid-stride (the last one clipped).
    #[launch_contract(domain = 1, coordinates = u32, block = (32, 1, 1))]
    #[kernel(launch_context = lc)]
    pub fn bump_runs(mut data: DisjointSlice<u32, LinearTiles<4>>) {
        let mut runs = data.grid_stride_runs32(thread::index_1d_u32(lc));
        while let Some(mut run) = runs.next_run() {
            for j in 0..run.len() {
                if let Some(mut element) = run.at(j) {
                    element.write(element.read().wrapping_add(1));
                }
            }
        }
    }

    /// Each thread fills its 2×2 tile of a 16-wide matrix with `tile_row * 1000 + tile_col`.
    #[kernel(launch_context = lc)]
    #[launch_contract(domain = 2, coordinates = u32, block = (4, 4, 1))]
    pub fn tiles(mut m: DisjointSlice<u32, RowMajorTiles<2, 2, 16>>) {
        let c = thread::coord_2d_u32(lc);
        if let Some(mut tile) = m.tile_2d32(c) {
            let v = c.row() * 1000 + c.col();
            tile.at_const::<0, 0>().write(v);
            tile.at_const::<0, 1>().write(v);
            tile.at_const::<1, 0>().write(v);
            tile.at_const::<1, 1>().write(v);
        }
    }

    /// Cell (row, col) of a matrix whose width the host binds: `row * 1000 + col + width * 10^6`.
    #[kernel]
    pub fn cells(mut out: DisjointSlice<u32, Runtime2DIndex>) {
        let width = out.row_width();
        if let Some(idx) = thread::index_2d_runtime(&out) {
            let v = (idx.row() * 1000 + idx.col()) as u32 + width * 1_000_000;
            if let Some(cell) = out.get_mut(idx) {
                *cell = v;
            }
        }
    }

    /// `out[i] = 2 * input[i]` through `get_mut_indexed`.
    #[kernel]
    pub fn doubled(input: &[f32], mut out: DisjointSlice<f32>) {
        if let Some((o, idx)) = out.get_mut_indexed() {
            *o = input[idx.get()] * 2.0;
        }
    }

    /// A nested module: its kernels launch through `nested::LoadedModule::from_parent(&module)`.
    pub mod nested {
        use super::*;

        /// `out[i] += 7`.
        #[kernel]
        pub fn add_seven(mut out: DisjointSlice<u32>) {
            if let Some((o, _)) = out.get_mut_indexed() {
                *o = o.wrapping_add(7);
            }
        }
    }

    /// `out[i] = i ^ 0x5a5a` through a `DisjointSlice` built in device code.
    ///
    /// # Safety
    /// `ptr` points to `len` device `u32`s no one else accesses during the launch.
    #[kernel]
    pub unsafe fn raw_parts(ptr: *mut u32, len: usize) {
        // SAFETY: forwarded to the caller; every thread builds the same slice and writes only
        // the element of its own index.
        let mut out = unsafe { DisjointSlice::<u32>::from_raw_parts(ptr, len) };
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = i as u32 ^ 0x5a5a;
        }
    }
}

fn main() {
    let mut report = Report::new("launch-contract");
    let (_ctx, stream, module) = report.load(kernels::load);
    let mut rng = Lcg::from_env_or_clock();

    // 1000 elements: 16 blocks of 64, the last one partial.
    let n = 1000usize;
    let input: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let want: Vec<u32> = (0..n).map(|i| input[i].wrapping_mul(3).wrapping_add(i as u32)).collect();
    let config = LaunchConfig1D::new((n as u32).div_ceil(64), 64, 0);

    report.check("prepared launch, u32 context and element view", || {
        let a = ck(DeviceBuffer::from_host(&stream, &input), "copy input")?;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![POISON; n]), "poison out")?;
        let prepared = ck(module.prepare_triple(config), "prepare_triple")?;
        ck(module.triple(&stream, &prepared, &a, &mut out), "launch triple")?;
        compare("out", &ck(out.to_host_vec(&stream), "copy out")?, &want, |a, b| a == b)
    });

    report.check("prepare refuses another block shape", || {
        match module.prepare_triple(LaunchConfig1D::new(8, 128, 0)) {
            Err(LaunchContractError::BlockShapeMismatch { required: (64, 1, 1), actual: (128, 1, 1), .. }) => Ok(()),
            other => Err(format!("expected BlockShapeMismatch, got {other:?}")),
        }
    });

    report.check("prepare refuses dynamic shared memory the contract does not name", || {
        match module.prepare_triple(LaunchConfig1D::new(8, 64, 16)) {
            Err(LaunchContractError::DynamicSharedMemoryExactMismatch { required: 0, actual: 16, .. }) => Ok(()),
            other => Err(format!("expected DynamicSharedMemoryExactMismatch, got {other:?}")),
        }
    });

    report.check("a requires relation that fails stops the launch", || {
        let short = ck(DeviceBuffer::from_host(&stream, &input[..n / 2]), "copy short input")?;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![POISON; n]), "poison out")?;
        let prepared = ck(module.prepare_triple(config), "prepare_triple")?;
        match module.triple(&stream, &prepared, &short, &mut out) {
            Err(LaunchContractError::SizeRequirementViolated { relation, lhs, rhs, .. }) => {
                if relation != "input.len() >= out.len()" || lhs != (n / 2) as u64 || rhs != n as u64 {
                    return Err(format!("wrong violation: `{relation}` with {lhs} vs {rhs}"));
                }
            }
            other => return Err(format!("expected SizeRequirementViolated, got {other:?}")),
        }
        compare("out (untouched)", &ck(out.to_host_vec(&stream), "copy out")?, &vec![POISON; n], |a, b| a == b)
    });

    report.check("the unchecked path is still refused a launch outside the domain", || {
        let a = ck(DeviceBuffer::from_host(&stream, &input), "copy input")?;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![POISON; n]), "poison out")?;
        let two_d = LaunchConfig { grid_dim: (8, 2, 1), block_dim: (64, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: `input.len() >= out.len()`, the contract's one relation.
        let launched = unsafe { module.triple_unchecked(&stream, two_d, &a, &mut out) };
        if launched.is_ok() {
            return Err("a 2D launch of a domain = 1 kernel was accepted".into());
        }
        ck(stream.synchronize(), "synchronize")?;
        compare("out (untouched)", &ck(out.to_host_vec(&stream), "copy out")?, &vec![POISON; n], |a, b| a == b)
    });

    report.check("grid-stride runs visit every element once", || {
        // 4 blocks of 32 threads, runs of 4: 512 elements per sweep; 1531 elements is three
        // sweeps less a clipped run.
        let len = 1531usize;
        let start: Vec<u32> = (0..len).map(|_| rng.next_u32()).collect();
        let mut data = ck(DeviceBuffer::from_host(&stream, &start), "copy data")?;
        let prepared = ck(module.prepare_bump_runs(LaunchConfig1D::new(4, 32, 0)), "prepare_bump_runs")?;
        ck(module.bump_runs(&stream, &prepared, &mut data), "launch bump_runs")?;
        let want: Vec<u32> = start.iter().map(|v| v.wrapping_add(1)).collect();
        compare("data", &ck(data.to_host_vec(&stream), "copy data")?, &want, |a, b| a == b)
    });

    report.check("2D tiles from coord_2d_u32", || {
        // 12 rows × 16 columns: 6 × 8 tiles; an 8 × 8 grid of threads, so two rows of threads
        // have no tile.
        let (rows, width) = (12usize, 16usize);
        let mut m = ck(DeviceBuffer::from_host(&stream, &vec![POISON; rows * width]), "poison m")?;
        let prepared = ck(module.prepare_tiles(LaunchConfig2D::new((2, 2), (4, 4), 0)), "prepare_tiles")?;
        ck(module.tiles(&stream, &prepared, &mut m), "launch tiles")?;
        let want: Vec<u32> = (0..rows * width).map(|i| ((i / width / 2) * 1000 + (i % width) / 2) as u32).collect();
        compare("m", &ck(m.to_host_vec(&stream), "copy m")?, &want, |a, b| a == b)
    });

    report.check("Runtime2DIndex slice with a host-bound row width", || {
        let (rows, width) = (9usize, 13u32);
        let len = rows * width as usize;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![POISON; len]), "poison out")?;
        // 16 × 16 threads over 9 rows of 13: columns and rows past the matrix get no cell.
        let config = LaunchConfig { grid_dim: (1, 2, 1), block_dim: (16, 8, 1), shared_mem_bytes: 0 };
        ck(module.cells(&stream, config, RowWidth::new(&mut out, width)), "launch cells")?;
        let w = width as usize;
        let want: Vec<u32> = (0..len).map(|i| ((i / w) * 1000 + i % w) as u32 + width * 1_000_000).collect();
        compare("out", &ck(out.to_host_vec(&stream), "copy out")?, &want, |a, b| a == b)
    });

    report.check("get_mut_indexed", || {
        let n = 777usize;
        let x = rng.vec_f32(n);
        let a = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let mut out = ck(DeviceBuffer::from_host(&stream, &vec![f32::NAN; n]), "poison out")?;
        ck(module.doubled(&stream, LaunchConfig::for_num_elems(n as u32), &a, &mut out), "launch doubled")?;
        let want: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
        compare("out", &ck(out.to_host_vec(&stream), "copy out")?, &want, same_bits_f32)
    });

    report.check("DisjointSlice::from_raw_parts in device code", || {
        let n = 515usize;
        let out = ck(DeviceBuffer::from_host(&stream, &vec![POISON; n]), "poison out")?;
        let ptr = out.as_device_ptr() as *mut u32;
        // SAFETY: `ptr` is `out`'s `n` elements, which nothing else touches until the copy back.
        ck(unsafe { module.raw_parts(&stream, LaunchConfig::for_num_elems(n as u32), ptr, n) }, "launch raw_parts")?;
        let want: Vec<u32> = (0..n as u32).map(|i| i ^ 0x5a5a).collect();
        compare("out", &ck(out.to_host_vec(&stream), "copy out")?, &want, |a, b| a == b)
    });

    report.check("nested module bound with from_parent", || {
        let n = 300usize;
        let start: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let mut out = ck(DeviceBuffer::from_host(&stream, &start), "copy start")?;
        let nested = ck(kernels::nested::LoadedModule::from_parent(&module), "nested::from_parent")?;
        ck(nested.add_seven(&stream, LaunchConfig::for_num_elems(n as u32), &mut out), "launch add_seven")?;
        let want: Vec<u32> = start.iter().map(|v| v.wrapping_add(7)).collect();
        compare("out", &ck(out.to_host_vec(&stream), "copy out")?, &want, |a, b| a == b)
    });

    report.finish()
}
