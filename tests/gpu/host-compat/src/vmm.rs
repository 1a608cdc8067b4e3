//! Virtual memory: physical memory mapped at a reserved range, written by copies and by a kernel
//! through the raw address; multicast queries (never creating a multicast object).
use cuda_core::{LaunchConfig, memory, vmm};

use crate::Env;
use crate::harness::{Lcg, Report, ck, compare};

const N: usize = 1 << 20;

pub fn checks(report: &mut Report, rng: &mut Lcg, env: &Env) {
    let (ctx, s, m) = (&env.ctx, &env.stream, &env.module);

    report.check("vmm_mapping", || {
        ck(ctx.bind_to_thread(), "bind_to_thread")?;
        let dev = ctx.cu_device();
        let granularity = ck(vmm::allocation_granularity(dev), "allocation_granularity")?;
        let size = vmm::align_size(N * 4, granularity);
        let phys = ck(vmm::PhysicalAllocation::new(dev, size), "PhysicalAllocation::new")?;
        let va = ck(vmm::VirtualReservation::new(size, 0), "VirtualReservation::new")?;
        let map = ck(vmm::Mapping::new(va.base(), size, &phys, 0), "Mapping::new")?;
        ck(vmm::set_access(va.base(), size, &[dev]), "set_access")?;
        if map.va() != va.base() || map.size() != size || phys.size() != size || phys.device() != dev {
            return Err("the mapping's accessors disagree with what was asked".into());
        }
        let host: Vec<u32> = (0..N).map(|_| rng.next_u32()).collect();
        let mut back = vec![0u32; N];
        // SAFETY: `va` maps `size >= N * 4` read-write bytes of this device.
        unsafe {
            ck(memory::memcpy_htod_sync(va.base(), host.as_ptr(), N * 4), "memcpy_htod_sync")?;
            ck(memory::memcpy_dtoh_sync(back.as_mut_ptr(), va.base(), N * 4), "memcpy_dtoh_sync")?;
        }
        compare("copies through the mapping", &back, &host, |x, y| x == y)?;
        let base = rng.next_u32() >> 1;
        let p = va.base() as *mut u32;
        ck(m.iota_at(s, LaunchConfig::for_num_elems(N as u32), p, N as u32, base), "iota_at on the mapping")?;
        ck(s.synchronize(), "synchronize")?;
        // SAFETY: as above.
        ck(unsafe { memory::memcpy_dtoh_sync(back.as_mut_ptr(), va.base(), N * 4) }, "memcpy_dtoh_sync")?;
        let want: Vec<u32> = (0..N as u32).map(|i| base.wrapping_add(i)).collect();
        compare("kernel writes through the mapping", &back, &want, |x, y| x == y)?;
        // Unmap before the reservation and the memory go (the driver wants that order).
        drop(map);
        drop(va);
        drop(phys);
        Ok(())
    });

    report.check("multicast_queries", || {
        let supported = ck(vmm::multicast_supported(ctx.cu_device()), "multicast_supported")?;
        if supported {
            let g = ck(
                vmm::multicast_granularity(1, N * 4, vmm::MulticastGranularity::Recommended),
                "multicast_granularity",
            )?;
            if g == 0 {
                return Err("multicast granularity 0".into());
            }
        }
        match vmm::MulticastObject::new(2, N * 4) {
            Ok(_) => Err("a multicast object was created".into()),
            Err(e) if e.name() == "CUDA_ERROR_NOT_SUPPORTED" => Ok(()),
            Err(e) => Err(format!("MulticastObject::new: expected CUDA_ERROR_NOT_SUPPORTED, got {e}")),
        }
    });
}
