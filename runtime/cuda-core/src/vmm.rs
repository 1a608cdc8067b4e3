//! Virtual memory management: physical allocations, reserved address ranges, mappings between
//! them and access rights (`cuMemCreate`, `cuMemAddressReserve`, `cuMemMap`, `cuMemSetAccess`).
//!
//! ```no_run
//! use cuda_core::{CudaContext, vmm};
//! let ctx = CudaContext::new(0)?;
//! ctx.bind_to_thread()?;
//! let dev = ctx.cu_device();
//! let size = vmm::align_size(1 << 20, vmm::allocation_granularity(dev)?);
//! let phys = vmm::PhysicalAllocation::new(dev, size)?;
//! let va = vmm::VirtualReservation::new(size, 0)?;
//! let map = vmm::Mapping::new(va.base(), size, &phys, 0)?;
//! vmm::set_access(va.base(), size, &[dev])?;
//! // `va.base()` is now device memory of `size` bytes. Drop order: mapping, reservation, memory.
//! drop((map, va, phys));
//! # Ok::<(), cuda_core::DriverError>(())
//! ```
//!
//! NVLink multicast objects (`MulticastObject`) exist as a type so that code written for
//! NVIDIA's cuda-oxide compiles, but cuda-oxide does not create them: [`MulticastObject::new`]
//! returns `CUDA_ERROR_NOT_SUPPORTED`. Querying support and granularity works.

use std::convert::Infallible;

use cudarc::driver::sys::{
    self, CUdevice, CUdevice_attribute, CUdeviceptr, CUmemAccess_flags, CUmemAllocationGranularity_flags,
    CUmemAllocationType, CUmemGenericAllocationHandle, CUmemLocationType, CUmulticastGranularity_flags, CUresult,
};

use crate::driver::{check, init};
use crate::error::DriverError;

/// A location meaning "memory of `device`".
fn device_location(device: CUdevice) -> sys::CUmemLocation {
    sys::CUmemLocation { type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: device }
}

/// Allocation properties of pinned device memory on `device`.
fn device_allocation_prop(device: CUdevice) -> sys::CUmemAllocationProp {
    // SAFETY: a plain C struct for which all-zero is the documented "no options" value.
    let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
    prop.type_ = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location = device_location(device);
    prop
}

/// Physical device memory (`cuMemCreate`), not yet visible at any address; released on drop.
pub struct PhysicalAllocation {
    handle: CUmemGenericAllocationHandle,
    size: usize,
    device: CUdevice,
}

impl PhysicalAllocation {
    /// Allocates `size` bytes (a multiple of [`allocation_granularity`]) on `device`.
    ///
    /// ```no_run
    /// # use cuda_core::{CudaContext, vmm};
    /// # let ctx = CudaContext::new(0)?; ctx.bind_to_thread()?;
    /// let size = vmm::allocation_granularity(ctx.cu_device())?;
    /// let phys = vmm::PhysicalAllocation::new(ctx.cu_device(), size)?;
    /// assert_eq!(phys.size(), size);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn new(device: CUdevice, size: usize) -> Result<PhysicalAllocation, DriverError> {
        init()?;
        let prop = device_allocation_prop(device);
        let mut handle = 0;
        // SAFETY: `prop` is a complete property struct; the handle is released in Drop.
        check(unsafe { sys::cuMemCreate(&mut handle, size, &prop, 0) }, "cuMemCreate")
            .map_err(|e| e.context(format!("allocating {size} bytes of physical memory on device {device}")))?;
        Ok(PhysicalAllocation { handle, size, device })
    }

    /// The driver's handle, for mapping it elsewhere.
    ///
    /// ```no_run
    /// # use cuda_core::{CudaContext, vmm};
    /// # let ctx = CudaContext::new(0)?; ctx.bind_to_thread()?;
    /// # let phys = vmm::PhysicalAllocation::new(ctx.cu_device(), 2 << 20)?;
    /// let handle: cuda_core::sys::CUmemGenericAllocationHandle = phys.handle();
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn handle(&self) -> CUmemGenericAllocationHandle {
        self.handle
    }

    /// Size in bytes.
    ///
    /// ```no_run
    /// # use cuda_core::{CudaContext, vmm};
    /// # let ctx = CudaContext::new(0)?; ctx.bind_to_thread()?;
    /// let phys = vmm::PhysicalAllocation::new(ctx.cu_device(), 2 << 20)?;
    /// assert_eq!(phys.size(), 2 << 20);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn size(&self) -> usize {
        self.size
    }

    /// The device the memory is on.
    ///
    /// ```no_run
    /// # use cuda_core::{CudaContext, vmm};
    /// # let ctx = CudaContext::new(0)?; ctx.bind_to_thread()?;
    /// let phys = vmm::PhysicalAllocation::new(ctx.cu_device(), 2 << 20)?;
    /// assert_eq!(phys.device(), ctx.cu_device());
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn device(&self) -> CUdevice {
        self.device
    }
}

impl Drop for PhysicalAllocation {
    fn drop(&mut self) {
        // SAFETY: we created the handle; the driver keeps the memory while a mapping still uses it.
        let _ = unsafe { sys::cuMemRelease(self.handle) };
    }
}

/// A range of device virtual addresses (`cuMemAddressReserve`), with nothing behind it until a
/// [`Mapping`] puts memory there; freed on drop.
pub struct VirtualReservation {
    base: CUdeviceptr,
    size: usize,
}

impl VirtualReservation {
    /// Reserves `size` bytes aligned to `alignment` (0: the default granularity). Needs a
    /// current context.
    ///
    /// ```no_run
    /// # use cuda_core::{CudaContext, vmm};
    /// # let ctx = CudaContext::new(0)?; ctx.bind_to_thread()?;
    /// let va = vmm::VirtualReservation::new(2 << 20, 0)?;
    /// assert_ne!(va.base(), 0);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn new(size: usize, alignment: usize) -> Result<VirtualReservation, DriverError> {
        init()?;
        let mut base = 0;
        // SAFETY: only reserves addresses; freed in Drop.
        check(unsafe { sys::cuMemAddressReserve(&mut base, size, alignment, 0, 0) }, "cuMemAddressReserve")
            .map_err(|e| e.context(format!("reserving {size} bytes of device address space")))?;
        Ok(VirtualReservation { base, size })
    }

    /// The first address of the range.
    ///
    /// ```no_run
    /// # use cuda_core::{CudaContext, vmm};
    /// # let ctx = CudaContext::new(0)?; ctx.bind_to_thread()?;
    /// let va = vmm::VirtualReservation::new(2 << 20, 0)?;
    /// let end = va.base() + va.size() as u64;
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn base(&self) -> CUdeviceptr {
        self.base
    }

    /// Size in bytes.
    ///
    /// ```no_run
    /// # use cuda_core::{CudaContext, vmm};
    /// # let ctx = CudaContext::new(0)?; ctx.bind_to_thread()?;
    /// assert_eq!(vmm::VirtualReservation::new(2 << 20, 0)?.size(), 2 << 20);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn size(&self) -> usize {
        self.size
    }
}

impl Drop for VirtualReservation {
    fn drop(&mut self) {
        // SAFETY: we reserved exactly this range.
        let _ = unsafe { sys::cuMemAddressFree(self.base, self.size) };
    }
}

/// Physical memory made visible at a reserved address range (`cuMemMap`); unmapped on drop.
/// Access must still be granted with [`set_access`].
pub struct Mapping {
    va: CUdeviceptr,
    size: usize,
}

impl Mapping {
    /// Maps `size` bytes of `phys`, from byte `offset`, at `va` (inside a [`VirtualReservation`];
    /// the driver rejects anything else).
    ///
    /// ```no_run
    /// # use cuda_core::{CudaContext, vmm};
    /// # let ctx = CudaContext::new(0)?; ctx.bind_to_thread()?;
    /// # let size = 2 << 20;
    /// let phys = vmm::PhysicalAllocation::new(ctx.cu_device(), size)?;
    /// let va = vmm::VirtualReservation::new(size, 0)?;
    /// let map = vmm::Mapping::new(va.base(), size, &phys, 0)?;
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn new(va: CUdeviceptr, size: usize, phys: &PhysicalAllocation, offset: usize) -> Result<Mapping, DriverError> {
        init()?;
        // SAFETY: the driver checks that `va..va+size` is reserved and unmapped and that the
        // handle is live and large enough.
        check(unsafe { sys::cuMemMap(va, size, offset, phys.handle, 0) }, "cuMemMap")
            .map_err(|e| e.context(format!("mapping {size} bytes at {va:#x}")))?;
        Ok(Mapping { va, size })
    }

    /// Maps a multicast object. No [`MulticastObject`] can exist (see [`MulticastObject::new`]),
    /// so this is never reached; it is here for code written for NVIDIA's cuda-oxide.
    ///
    /// ```no_run
    /// # use cuda_core::vmm;
    /// // A MulticastObject is never made, so there is nothing to map:
    /// assert!(vmm::MulticastObject::new(2, 2 << 20).is_err());
    /// ```
    pub fn new_multicast(
        _va: CUdeviceptr,
        _size: usize,
        multicast: &MulticastObject,
        _offset: usize,
    ) -> Result<Mapping, DriverError> {
        match multicast.never {}
    }

    /// The mapped address.
    ///
    /// ```no_run
    /// # use cuda_core::{CudaContext, vmm};
    /// # let ctx = CudaContext::new(0)?; ctx.bind_to_thread()?; let size = 2 << 20;
    /// # let phys = vmm::PhysicalAllocation::new(ctx.cu_device(), size)?;
    /// # let va = vmm::VirtualReservation::new(size, 0)?;
    /// let map = vmm::Mapping::new(va.base(), size, &phys, 0)?;
    /// assert_eq!(map.va(), va.base());
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn va(&self) -> CUdeviceptr {
        self.va
    }

    /// Size in bytes.
    ///
    /// ```no_run
    /// # use cuda_core::{CudaContext, vmm};
    /// # let ctx = CudaContext::new(0)?; ctx.bind_to_thread()?; let size = 2 << 20;
    /// # let phys = vmm::PhysicalAllocation::new(ctx.cu_device(), size)?;
    /// # let va = vmm::VirtualReservation::new(size, 0)?;
    /// assert_eq!(vmm::Mapping::new(va.base(), size, &phys, 0)?.size(), size);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn size(&self) -> usize {
        self.size
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: we mapped exactly this range.
        let _ = unsafe { sys::cuMemUnmap(self.va, self.size) };
    }
}

/// Grants each of `devices` read-write access to the mapped range `va..va+size`.
///
/// ```no_run
/// # use cuda_core::{CudaContext, vmm};
/// # let ctx = CudaContext::new(0)?; ctx.bind_to_thread()?; let size = 2 << 20;
/// # let phys = vmm::PhysicalAllocation::new(ctx.cu_device(), size)?;
/// # let va = vmm::VirtualReservation::new(size, 0)?;
/// # let map = vmm::Mapping::new(va.base(), size, &phys, 0)?;
/// vmm::set_access(va.base(), size, &[ctx.cu_device()])?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn set_access(va: CUdeviceptr, size: usize, devices: &[CUdevice]) -> Result<(), DriverError> {
    init()?;
    let descs: Vec<sys::CUmemAccessDesc> = devices
        .iter()
        .map(|&device| sys::CUmemAccessDesc {
            location: device_location(device),
            flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        })
        .collect();
    // SAFETY: `descs` holds `descs.len()` complete descriptors; the driver checks the range.
    check(unsafe { sys::cuMemSetAccess(va, size, descs.as_ptr(), descs.len()) }, "cuMemSetAccess")
}

/// The size that physical allocations on `device` must be a multiple of.
///
/// ```no_run
/// # let ctx = cuda_core::CudaContext::new(0)?;
/// let granularity = cuda_core::vmm::allocation_granularity(ctx.cu_device())?;
/// assert!(granularity.is_power_of_two());
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn allocation_granularity(device: CUdevice) -> Result<usize, DriverError> {
    init()?;
    let prop = device_allocation_prop(device);
    let mut granularity = 0;
    let flag = CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM;
    // SAFETY: `prop` is a complete property struct.
    check(
        unsafe { sys::cuMemGetAllocationGranularity(&mut granularity, &prop, flag) },
        "cuMemGetAllocationGranularity",
    )?;
    Ok(granularity)
}

/// `size` rounded up to a multiple of `granularity`, which must be a power of two (what the
/// driver's granularities are).
///
/// ```
/// assert_eq!(cuda_core::vmm::align_size(3000, 1024), 3072);
/// assert_eq!(cuda_core::vmm::align_size(2048, 1024), 2048);
/// ```
pub fn align_size(size: usize, granularity: usize) -> usize {
    debug_assert!(granularity.is_power_of_two(), "align_size: granularity {granularity} is not a power of two");
    (size + granularity - 1) & !(granularity - 1)
}

/// Which multicast granularity to ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MulticastGranularity {
    /// The smallest size a multicast object may have.
    Minimum,
    /// The size the driver recommends for performance.
    Recommended,
}

/// Whether `device` supports NVLink multicast objects (`CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED`;
/// `false` when the driver does not know the attribute). cuda-oxide does not create multicast
/// objects even where this is `true` (see [`MulticastObject::new`]).
///
/// ```no_run
/// # let ctx = cuda_core::CudaContext::new(0)?;
/// if !cuda_core::vmm::multicast_supported(ctx.cu_device())? {
///     println!("skipping: no NVLink multicast");
/// }
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn multicast_supported(device: CUdevice) -> Result<bool, DriverError> {
    init()?;
    let mut value = 0;
    let attr = CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED;
    // SAFETY: plain attribute query.
    match unsafe { sys::cuDeviceGetAttribute(&mut value, attr, device) } {
        CUresult::CUDA_ERROR_INVALID_VALUE => Ok(false),
        other => check(other, "cuDeviceGetAttribute").map(|()| value != 0),
    }
}

/// The multicast granularity for a team of `num_devices` sharing `size` bytes (a query only;
/// it creates nothing).
///
/// ```no_run
/// use cuda_core::vmm::{MulticastGranularity, multicast_granularity};
/// let g = multicast_granularity(2, 1 << 20, MulticastGranularity::Recommended)?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn multicast_granularity(
    num_devices: u32,
    size: usize,
    granularity: MulticastGranularity,
) -> Result<usize, DriverError> {
    init()?;
    // SAFETY: a plain C struct for which all-zero is the documented "no options" value.
    let mut prop: sys::CUmulticastObjectProp = unsafe { std::mem::zeroed() };
    prop.numDevices = num_devices;
    prop.size = size;
    let flag = match granularity {
        MulticastGranularity::Minimum => CUmulticastGranularity_flags::CU_MULTICAST_GRANULARITY_MINIMUM,
        MulticastGranularity::Recommended => CUmulticastGranularity_flags::CU_MULTICAST_GRANULARITY_RECOMMENDED,
    };
    let mut value = 0;
    // SAFETY: `prop` is complete; this only queries.
    check(unsafe { sys::cuMulticastGetGranularity(&mut value, &prop, flag) }, "cuMulticastGetGranularity")?;
    Ok(value)
}

/// An NVLink multicast object. cuda-oxide never creates one, so no value of this type exists;
/// its methods are here so that code written for NVIDIA's cuda-oxide compiles.
pub struct MulticastObject {
    never: Infallible,
}

impl MulticastObject {
    /// Always `CUDA_ERROR_NOT_SUPPORTED`: cuda-oxide does not create multicast objects
    /// (`cuMulticastCreate` changes NVLink state shared by every process on the machine).
    ///
    /// ```
    /// let err = cuda_core::vmm::MulticastObject::new(2, 2 << 20).err().unwrap();
    /// assert_eq!(err.name(), "CUDA_ERROR_NOT_SUPPORTED");
    /// ```
    pub fn new(num_devices: u32, size: usize) -> Result<MulticastObject, DriverError> {
        Err(DriverError::from_cuda(CUresult::CUDA_ERROR_NOT_SUPPORTED, "cuMulticastCreate").context(format!(
            "creating a multicast object for {num_devices} devices and {size} bytes (cuda-oxide does not \
             create NVLink multicast objects; check vmm::multicast_supported and use unicast memory instead)"
        )))
    }

    /// Adds `device` to the team (unreachable: no `MulticastObject` exists).
    ///
    /// ```
    /// assert!(cuda_core::vmm::MulticastObject::new(2, 1 << 21).is_err());
    /// ```
    pub fn add_device(&self, _device: CUdevice) -> Result<(), DriverError> {
        match self.never {}
    }

    /// Binds physical memory to the object (unreachable: no `MulticastObject` exists).
    ///
    /// ```
    /// assert!(cuda_core::vmm::MulticastObject::new(2, 1 << 21).is_err());
    /// ```
    pub fn bind_mem(
        &self,
        _mc_offset: usize,
        _phys: &PhysicalAllocation,
        _mem_offset: usize,
        _size: usize,
    ) -> Result<MulticastBinding, DriverError> {
        match self.never {}
    }

    /// The driver handle (unreachable: no `MulticastObject` exists).
    ///
    /// ```
    /// assert!(cuda_core::vmm::MulticastObject::new(2, 1 << 21).is_err());
    /// ```
    pub fn handle(&self) -> CUmemGenericAllocationHandle {
        match self.never {}
    }
}

/// Physical memory bound to a [`MulticastObject`]; like the object, never created.
pub struct MulticastBinding {
    never: Infallible,
}

impl MulticastBinding {
    /// The device whose memory is bound (unreachable: no `MulticastBinding` exists).
    ///
    /// ```
    /// assert!(cuda_core::vmm::MulticastObject::new(2, 1 << 21).is_err());
    /// ```
    pub fn device(&self) -> CUdevice {
        match self.never {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_up_to_the_granularity() {
        assert_eq!(align_size(0, 4096), 0);
        assert_eq!(align_size(1, 4096), 4096);
        assert_eq!(align_size(4096, 4096), 4096);
        assert_eq!(align_size(4097, 2 << 20), 2 << 20);
    }

    #[test]
    fn multicast_objects_are_not_created() {
        let err = MulticastObject::new(2, 2 << 20).err().expect("never created");
        assert_eq!(err.name(), "CUDA_ERROR_NOT_SUPPORTED");
        assert!(err.to_string().contains("does not create NVLink multicast objects"), "{err}");
    }
}
