//! Cooperative launches (`#[cooperative_launch]`): the driver runs every block of the grid at
//! once, which `grid::sync()` needs (a block that is not resident could never arrive). A grid
//! larger than what the GPU can hold at once is refused before it is launched, with the numbers:
//! the driver's own refusal (`CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`) does not say by how much.

use std::ffi::c_int;

use cudarc::driver::sys;

use crate::context::CudaContext;
use crate::driver::check;
use crate::error::DriverError;
use crate::launch::LaunchConfig;
use crate::module::Function;

/// How many blocks of a launch the GPU can hold at once, and how that was worked out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Residency {
    /// Blocks in the grid.
    pub blocks: u64,
    /// Blocks of this kernel, with this block size and shared memory, the GPU holds at once.
    pub capacity: u64,
    /// How `capacity` was found (for messages): `"N blocks per SM × M SMs"` or the cluster form.
    pub basis: Basis,
}

/// What bounds [`Residency::capacity`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// `per_sm` blocks on each of `sms` multiprocessors (`cuOccupancyMaxActiveBlocksPerMultiprocessor`).
    Blocks {
        /// Blocks of this kernel one SM holds.
        per_sm: u32,
        /// Multiprocessors of the GPU.
        sms: u32,
    },
    /// `clusters` clusters of `cluster_blocks` blocks (`cuOccupancyMaxActiveClusters`).
    Clusters {
        /// Clusters the GPU holds at once.
        clusters: u32,
        /// Blocks per cluster.
        cluster_blocks: u64,
    },
}

impl Residency {
    /// `true` when the whole grid fits at once.
    pub fn fits(&self) -> bool {
        self.blocks <= self.capacity
    }

    /// The error for a grid that does not fit (`kernel` names it).
    pub fn too_large(&self, kernel: &str) -> String {
        let basis = match self.basis {
            Basis::Blocks { per_sm, sms } => format!("{per_sm} blocks per SM × {sms} SMs"),
            Basis::Clusters { clusters, cluster_blocks } => {
                format!("{clusters} clusters of {cluster_blocks} blocks")
            }
        };
        format!(
            "kernel `{kernel}` is a #[cooperative_launch] kernel: its cooperative grid has {} blocks, but only {} \
             can be resident at once on this GPU ({basis}, with this block size and shared memory); \
             grid::sync() needs every block resident, so launch at most {} blocks (e.g. a grid-stride loop)",
            self.blocks, self.capacity, self.capacity
        )
    }
}

impl CudaContext {
    /// Whether the device can launch cooperatively (`CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH`).
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// assert!(ctx.supports_cooperative_launch()?); // every GPU since Pascal
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn supports_cooperative_launch(&self) -> Result<bool, DriverError> {
        self.bind_to_thread()?;
        let mut value = 0;
        let attr = sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH;
        // SAFETY: the device handle is live.
        check(unsafe { sys::cuDeviceGetAttribute(&mut value, attr, self.cu_device()) }, "cuDeviceGetAttribute")?;
        Ok(value != 0)
    }
}

/// How many blocks of `f` launched with `config` (and thread block clusters of `cluster`, if
/// given) the GPU holds at once. Dynamic shared memory above the default must already be
/// allowed on `f` (the launch sets it before asking).
pub fn residency(
    f: &Function,
    config: &LaunchConfig,
    cluster: Option<(u32, u32, u32)>,
) -> Result<Residency, DriverError> {
    let ctx = f.context();
    ctx.bind_to_thread()?;
    let (gx, gy, gz) = config.grid_dim;
    let blocks = u64::from(gx) * u64::from(gy) * u64::from(gz);
    let what = || format!("working out how many blocks of kernel `{}` fit on the GPU at once", f.name());
    let basis = match cluster {
        None => {
            let threads = config.threads_per_block();
            let mut per_sm: c_int = 0;
            // SAFETY: the function is live and its context bound; the driver writes one int.
            let r = unsafe {
                sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                    &mut per_sm,
                    f.raw(),
                    threads as c_int,
                    config.shared_mem_bytes as usize,
                )
            };
            check(r, "cuOccupancyMaxActiveBlocksPerMultiprocessor").map_err(|e| e.context(what()))?;
            Basis::Blocks { per_sm: per_sm.max(0) as u32, sms: ctx.sm_count() }
        }
        Some((cx, cy, cz)) => {
            let mut attr = [crate::launch::cluster_attribute((cx, cy, cz))];
            let launch = crate::launch::launch_config_ex(config, std::ptr::null_mut(), &mut attr);
            let mut clusters: c_int = 0;
            // SAFETY: as above; `attr` outlives the call.
            let r = unsafe { sys::cuOccupancyMaxActiveClusters(&mut clusters, f.raw(), &launch) };
            check(r, "cuOccupancyMaxActiveClusters").map_err(|e| e.context(what()))?;
            let cluster_blocks = u64::from(cx) * u64::from(cy) * u64::from(cz);
            Basis::Clusters { clusters: clusters.max(0) as u32, cluster_blocks }
        }
    };
    let capacity = match basis {
        Basis::Blocks { per_sm, sms } => u64::from(per_sm) * u64::from(sms),
        Basis::Clusters { clusters, cluster_blocks } => u64::from(clusters) * cluster_blocks,
    };
    Ok(Residency { blocks, capacity, basis })
}

/// Checks that a cooperative launch of `f` can run: the GPU supports it and the whole grid is
/// resident at once. Called by every launch of a `#[cooperative_launch]` kernel.
pub(crate) fn check_launch(
    f: &Function,
    config: &LaunchConfig,
    cluster: Option<(u32, u32, u32)>,
) -> Result<(), DriverError> {
    if !f.context().supports_cooperative_launch()? {
        return Err(DriverError::invalid_config(format!(
            "kernel `{}` is a #[cooperative_launch] kernel, and this GPU cannot launch cooperatively",
            f.name()
        )));
    }
    let residency = residency(f, config, cluster)?;
    if !residency.fits() {
        return Err(DriverError::invalid_config(residency.too_large(f.name())));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_large_says_how_many_fit_and_why() {
        let r = Residency { blocks: 1_048_576, capacity: 264, basis: Basis::Blocks { per_sm: 2, sms: 132 } };
        assert!(!r.fits());
        let m = r.too_large("sum");
        assert!(m.contains("cooperative grid has 1048576 blocks"), "{m}");
        assert!(m.contains("only 264 can be resident"), "{m}");
        assert!(m.contains("2 blocks per SM × 132 SMs"), "{m}");
        let c = Residency { blocks: 8, capacity: 8, basis: Basis::Clusters { clusters: 4, cluster_blocks: 2 } };
        assert!(c.fits());
        let c = Residency { blocks: 10, ..c };
        assert!(c.too_large("k").contains("4 clusters of 2 blocks"));
    }
}
