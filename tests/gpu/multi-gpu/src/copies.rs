//! Copies between contexts: `copy_peer_async` and `copy_peer_staged_async` between two contexts
//! of each GPU and between every pair of GPUs, with the stream on either side, and the async
//! `copy_peer` operations; the stream of a third context and a length mismatch refused.

use std::sync::Arc;

use cuda_async::device_operation::DeviceOperation;
use cuda_async::transfer::{copy_peer, copy_peer_owned};
use cuda_core::memory::STAGING_CHUNK_BYTES;
use cuda_core::{CudaContext, DeviceBuffer, DriverError, PeerPath, peer_path};

use crate::harness::{Lcg, Report, ck};
use crate::placement::download;
use crate::{random_u32, same};

/// Poison for copy destinations.
const POISON: u32 = 0xdead_beef;

/// Element counts: empty, one, odd, and three staging chunks and a bit (the two pinned buffers
/// reused, a last chunk that is not full).
fn lengths() -> [usize; 4] {
    [0, 1, 4099, 3 * STAGING_CHUNK_BYTES / 4 + 5]
}

/// Which way a copy goes.
#[derive(Clone, Copy, Debug)]
enum How {
    /// `copy_peer_async` on a stream of the destination.
    Peer,
    /// `copy_peer_staged_async` on a stream of the destination.
    StagedDst,
    /// `copy_peer_staged_async` on a stream of the source.
    StagedSrc,
}

/// Copies `data` from a buffer of `src` into a poisoned one of `dst` and compares.
fn copy_and_check(src: &Arc<CudaContext>, dst: &Arc<CudaContext>, data: &[u32], how: How) -> Result<(), String> {
    let (ss, ds) = (ck(src.new_stream(), "new_stream")?, ck(dst.new_stream(), "new_stream")?);
    let from = ck(DeviceBuffer::from_host(&ss, data), "upload the source")?;
    let mut to = ck(DeviceBuffer::from_host(&ds, &vec![POISON; data.len()]), "poison the destination")?;
    // The copy is ordered on its stream only: the uploads go first.
    ck(ss.synchronize(), "synchronize")?;
    ck(ds.synchronize(), "synchronize")?;
    match how {
        How::Peer => {
            let path = ck(to.copy_peer_async(&ds, &from), "copy_peer_async")?;
            let want = ck(peer_path(src, dst), "peer_path")?;
            if path != want {
                return Err(format!("copy_peer_async went {path:?}, peer_path says {want:?}"));
            }
            ck(ds.synchronize(), "synchronize")?;
        }
        How::StagedDst => {
            ck(to.copy_peer_staged_async(&ds, &from), "copy_peer_staged_async (destination's stream)")?;
            ck(ds.synchronize(), "synchronize")?;
        }
        How::StagedSrc => {
            ck(to.copy_peer_staged_async(&ss, &from), "copy_peer_staged_async (source's stream)")?;
            // The copy completes with the source's stream.
            ck(ss.synchronize(), "synchronize")?;
        }
    }
    same(&format!("{how:?} copy of {} elements", data.len()), &download(&to)?, data)
}

/// Every way, every length, one pair of contexts.
fn pair(rng: &mut Lcg, src: &Arc<CudaContext>, dst: &Arc<CudaContext>) -> Result<(), String> {
    for len in lengths() {
        let data = random_u32(rng, len);
        for how in [How::Peer, How::StagedDst, How::StagedSrc] {
            copy_and_check(src, dst, &data, how)?;
        }
    }
    Ok(())
}

fn describe(ctx: &CudaContext) -> String {
    format!("device {}{}", ctx.ordinal(), if ctx.is_primary() { "" } else { " (private context)" })
}

pub fn checks(report: &mut Report, rng: &mut Lcg, n: usize) {
    report.check("peer_and_staged_copies_between_two_contexts_of_one_gpu", || {
        for d in 0..n {
            let primary = ck(CudaContext::new(d), "CudaContext::new")?;
            let private = ck(CudaContext::new_private(d), "CudaContext::new_private")?;
            if ck(peer_path(&primary, &private), "peer_path")? != PeerPath::Peer {
                return Err("two contexts of one GPU should copy by cuMemcpyPeerAsync".into());
            }
            pair(rng, &primary, &private)
                .map_err(|e| format!("{} -> {}: {e}", describe(&primary), describe(&private)))?;
            pair(rng, &private, &primary)
                .map_err(|e| format!("{} -> {}: {e}", describe(&private), describe(&primary)))?;
            // Within one context: the plain device copy.
            let data = random_u32(rng, 4099);
            copy_and_check(&primary, &primary, &data, How::Peer)?;
        }
        Ok(())
    });

    report.check("peer_and_staged_copies_between_every_pair_of_gpus", || {
        if n < 2 {
            println!("    (one GPU: its two contexts stood for two GPUs above)");
            return Ok(());
        }
        for a in 0..n {
            for b in (0..n).filter(|&b| b != a) {
                let (ca, cb) =
                    (ck(CudaContext::new(a), "CudaContext::new")?, ck(CudaContext::new(b), "CudaContext::new")?);
                let path = ck(peer_path(&ca, &cb), "peer_path")?;
                println!("    device {a} -> device {b}: {path:?}");
                pair(rng, &ca, &cb).map_err(|e| format!("device {a} -> device {b}: {e}"))?;
            }
        }
        Ok(())
    });

    report.check("copies_refuse_a_third_context_and_a_length_mismatch", || {
        let (a, b, c) = (
            ck(CudaContext::new_private(0), "new_private")?,
            ck(CudaContext::new_private(0), "new_private")?,
            ck(CudaContext::new(0), "new")?,
        );
        let (sa, sb, sc) = (ck(a.new_stream(), "s")?, ck(b.new_stream(), "s")?, ck(c.new_stream(), "s")?);
        let from = ck(DeviceBuffer::from_host(&sa, &[1u32, 2, 3]), "upload")?;
        let mut to = ck(DeviceBuffer::from_host(&sb, &[POISON; 3]), "upload")?;
        for (what, result) in [
            ("copy_peer_async", to.copy_peer_async(&sc, &from).map(|_| ())),
            ("copy_peer_staged_async", to.copy_peer_staged_async(&sc, &from)),
        ] {
            match result {
                Err(DriverError::Placement { message }) if message.contains("neither the source's") => {
                    println!("    ({message})");
                }
                other => return Err(format!("{what} on a third context's stream: {other:?}")),
            }
        }
        let mut short = ck(DeviceBuffer::<u32>::zeroed(&sb, 2), "zeroed")?;
        match short.copy_peer_async(&sb, &from) {
            Err(DriverError::LengthMismatch { .. }) => {}
            other => return Err(format!("a copy into a shorter buffer: {other:?}")),
        }
        ck(sb.synchronize(), "synchronize")?;
        same("the refused copies' destination", &ck(to.to_host_vec(&sb), "download")?, &[POISON; 3])
    });

    report.check("copy_peer_operations_between_devices", || {
        // One GPU: device 0 to itself (the plain copy); several: each device to the next.
        for a in 0..n {
            let b = (a + 1) % n;
            let data = random_u32(rng, 1_000_003);
            // Filled by an operation on device a, copied by one on device b: the runtime orders
            // device b's stream after device a's.
            let src = DeviceOperation::new(a, |exec| DeviceBuffer::from_host(exec.stream(), &data));
            let dst = ck(
                DeviceOperation::new(b, |exec| DeviceBuffer::from_host(exec.stream(), &vec![POISON; data.len()]))
                    .sync(),
                "poison the destination",
            )?;
            let (src, dst) = ck(
                src.and_then(move |src| copy_peer_owned(src, dst)).sync(),
                "from_host(a).and_then(copy_peer_owned(.., b)).sync()",
            )?;
            same(&format!("copy_peer_owned {a} -> {b}"), &download(&dst)?, &data)?;
            let poisoned = ck(
                DeviceOperation::new(b, |exec| DeviceBuffer::from_host(exec.stream(), &vec![POISON; data.len()]))
                    .sync(),
                "poison",
            )?;
            let back = ck(ck(copy_peer(&dst, poisoned), "copy_peer")?.sync(), "copy_peer(..).sync()")?;
            same(&format!("copy_peer {b} -> {b}"), &download(&back)?, &data)?;
            drop(src);
        }
        Ok(())
    });
}
