//! Copies between pinned host memory and device memory as lazy operations: they compose with
//! `and_then`, `map` and `zip!` like launches do, and overlap kernels and copies of other streams.
//!
//! | call | what |
//! |---|---|
//! | [`upload(&host, dev)`](upload) | copies pinned `host` into device buffer `dev`, yields `dev` |
//! | [`download(dev, &mut host)`](download) | copies `dev` into pinned `host`, yields `dev`; `host` holds the data once the operation has completed |
//! | [`upload_owned(host, dev)`](upload_owned), [`download_owned(dev, host)`](download_owned) | the same owning both buffers: `DeviceOperation<'static, _>`, for `tokio::spawn` |
//! | [`to_device(&host)`](to_device) | a new device buffer holding a copy of `host` |
//! | [`copy_peer(&src, dst)`](copy_peer), [`copy_peer_owned(src, dst)`](copy_peer_owned) | copies a buffer of one GPU into one of another (peer-to-peer, or staged through host memory), on the destination's device |
//!
//! The host side is a [`PinnedBuffer`]: page-locked memory that the copy engines read and write
//! directly while the stream runs (`cuda_core::PinnedBuffer` says why that matters). It is
//! borrowed, since pinned buffers are allocated once and reused; the device buffer moves through
//! the operation and comes back in its output, so it chains into the `_async_owned` launch
//! methods that `#[cuda_module]` generates:
//!
//! ```no_run
//! # use cuda_async::device_operation::DeviceOperation;
//! # use cuda_core::{DeviceBuffer, DriverError, PinnedBuffer};
//! # struct M;
//! # impl M { fn square_async_owned(&self, _: cuda_core::LaunchConfig, d: DeviceBuffer<f32>) -> Result<DeviceOperation<'static, DeviceBuffer<f32>>, DriverError> { Ok(cuda_async::device_operation::value(d)) } }
//! # fn f(module: &M, input: &PinnedBuffer<f32>, output: &mut PinnedBuffer<f32>, dev: DeviceBuffer<f32>) -> Result<(), DriverError> {
//! use cuda_async::transfer::{download, upload};
//! let cfg = cuda_core::LaunchConfig::for_num_elems(dev.len() as u32);
//! let dev = upload(input, dev)?
//!     .and_then(|dev| module.square_async_owned(cfg, dev))
//!     .and_then(|dev| download(dev, output))
//!     .sync()?;
//! # Ok(()) }
//! ```
//!
//! Lengths are checked when the operation is built, so a mismatch shows up at the `?` after the
//! call. The operation keeps its pinned buffer borrowed until it has completed; besides, a
//! `PinnedBuffer` waits for the copies queued on it before it is read, changed or freed.

use cuda_core::{DeviceBuffer, DeviceCopy, DriverError, PinnedBuffer};

use crate::device_operation::DeviceOperation;

/// What [`upload_owned`] yields: the source and the filled destination, once the copy has run.
pub type UploadOwned<T> = DeviceOperation<'static, (PinnedBuffer<T>, DeviceBuffer<T>)>;

/// What [`download_owned`] yields: the source and the filled destination, once the copy has run.
pub type DownloadOwned<T> = DeviceOperation<'static, (DeviceBuffer<T>, PinnedBuffer<T>)>;

fn check_len(operation: &'static str, expected: usize, found: usize) -> Result<(), DriverError> {
    if expected == found { Ok(()) } else { Err(DriverError::LengthMismatch { operation, expected, found }) }
}

/// Copies `src` into `dst` (same length) when the operation runs, on the device of `dst`;
/// yields `dst`.
///
/// ```no_run
/// use cuda_async::transfer::upload;
/// use cuda_core::{CudaContext, DeviceBuffer, PinnedBuffer};
/// let ctx = CudaContext::new(0)?;
/// let host = PinnedBuffer::from_slice(&ctx, &[1.0f32; 4096])?;
/// let dev = DeviceBuffer::<f32>::zeroed(&ctx.default_stream(), 4096)?;
/// ctx.default_stream().synchronize()?;
/// let dev = upload(&host, dev)?.sync()?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn upload<'a, T: DeviceCopy + Send + Sync>(
    src: &'a PinnedBuffer<T>,
    mut dst: DeviceBuffer<T>,
) -> Result<DeviceOperation<'a, DeviceBuffer<T>>, DriverError> {
    check_len("upload", dst.len(), src.len())?;
    let device = dst.context().ordinal();
    Ok(DeviceOperation::new(device, move |exec| {
        dst.copy_from_pinned(exec.stream(), src)?;
        Ok(dst)
    }))
}

/// Copies `src` into `dst` (same length) when the operation runs, on the device of `src`;
/// yields `src`. Running it only queues the copy (a non-blocking download: the thread that
/// queues it never waits); `dst` holds the data once the operation has completed (`.sync()`
/// returned, `.await` resumed).
///
/// ```no_run
/// use cuda_async::transfer::download;
/// use cuda_core::{CudaContext, DeviceBuffer, PinnedBuffer};
/// let ctx = CudaContext::new(0)?;
/// let dev = DeviceBuffer::from_host(&ctx.default_stream(), &[2u32; 1024])?;
/// ctx.default_stream().synchronize()?;
/// let mut host = PinnedBuffer::filled(&ctx, 1024, 0u32)?;
/// let _dev = download(dev, &mut host)?.sync()?;
/// assert!(host.as_slice()?.iter().all(|&x| x == 2));
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn download<'a, T: DeviceCopy + Send + Sync>(
    src: DeviceBuffer<T>,
    dst: &'a mut PinnedBuffer<T>,
) -> Result<DeviceOperation<'a, DeviceBuffer<T>>, DriverError> {
    check_len("download", src.len(), dst.len())?;
    let device = src.context().ordinal();
    Ok(DeviceOperation::new(device, move |exec| {
        src.copy_to_pinned(exec.stream(), dst)?;
        Ok(src)
    }))
}

/// [`upload`] owning both buffers: yields `(src, dst)` once the copy has completed, so it can be
/// `tokio::spawn`ed.
///
/// ```no_run
/// use cuda_async::transfer::upload_owned;
/// use cuda_core::{CudaContext, DeviceBuffer, PinnedBuffer};
/// let ctx = CudaContext::new(0)?;
/// let host = PinnedBuffer::from_slice(&ctx, &[5i64; 64])?;
/// let dev = DeviceBuffer::<i64>::zeroed(&ctx.default_stream(), 64)?;
/// ctx.default_stream().synchronize()?;
/// let (host, dev) = upload_owned(host, dev)?.sync()?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn upload_owned<T: DeviceCopy + Send + Sync + 'static>(
    src: PinnedBuffer<T>,
    mut dst: DeviceBuffer<T>,
) -> Result<UploadOwned<T>, DriverError> {
    check_len("upload_owned", dst.len(), src.len())?;
    let device = dst.context().ordinal();
    Ok(DeviceOperation::new(device, move |exec| {
        dst.copy_from_pinned(exec.stream(), &src)?;
        Ok((src, dst))
    }))
}

/// [`download`] owning both buffers: yields `(src, dst)` once the copy has completed.
///
/// ```no_run
/// use cuda_async::transfer::download_owned;
/// use cuda_core::{CudaContext, DeviceBuffer, PinnedBuffer};
/// let ctx = CudaContext::new(0)?;
/// let dev = DeviceBuffer::from_host(&ctx.default_stream(), &[1u8; 16])?;
/// ctx.default_stream().synchronize()?;
/// let host = PinnedBuffer::filled(&ctx, 16, 0u8)?;
/// let (_dev, host) = tokio::runtime::Runtime::new().unwrap().block_on(async { download_owned(dev, host)?.await })?;
/// assert_eq!(host.as_slice()?, [1; 16]);
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn download_owned<T: DeviceCopy + Send + Sync + 'static>(
    src: DeviceBuffer<T>,
    mut dst: PinnedBuffer<T>,
) -> Result<DownloadOwned<T>, DriverError> {
    check_len("download_owned", src.len(), dst.len())?;
    let device = src.context().ordinal();
    Ok(DeviceOperation::new(device, move |exec| {
        src.copy_to_pinned(exec.stream(), &mut dst)?;
        Ok((src, dst))
    }))
}

/// A new device buffer holding a copy of `src`, allocated on the device the operation runs on
/// (the device of the operation it is composed into; on its own, the default device).
///
/// ```no_run
/// use cuda_async::transfer::to_device;
/// let ctx = cuda_core::CudaContext::new(0)?;
/// let host = cuda_core::PinnedBuffer::from_slice(&ctx, &[3.0f64; 256])?;
/// let dev = to_device(&host).sync()?;
/// assert_eq!(dev.len(), 256);
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn to_device<'a, T: DeviceCopy + Send + Sync>(src: &'a PinnedBuffer<T>) -> DeviceOperation<'a, DeviceBuffer<T>> {
    DeviceOperation::anywhere(move |exec| {
        exec.bind()?;
        DeviceBuffer::from_pinned(exec.stream(), src)
    })
}

/// Copies `src` (a buffer of any device) into `dst` (same length) when the operation runs, on
/// the device of `dst`, as [`DeviceBuffer::copy_peer_async`] does (peer-to-peer where the GPUs
/// allow it, else staged through pinned host memory); yields `dst`. It starts after the work
/// queued before it on the stream it runs on: compose it after the operation that fills `src`
/// (`and_then`), and the runtime orders the two devices' streams.
///
/// ```no_run
/// use cuda_async::device_context::init_device_contexts;
/// use cuda_async::device_operation::DeviceOperation;
/// use cuda_async::transfer::copy_peer;
/// use cuda_core::DeviceBuffer;
/// init_device_contexts(0, 2)?;
/// let on_gpu0 = DeviceOperation::new(0, |exec| DeviceBuffer::from_host(exec.stream(), &[1.0f32; 4096])).sync()?;
/// let on_gpu1 = DeviceOperation::new(1, |exec| DeviceBuffer::<f32>::zeroed(exec.stream(), 4096)).sync()?;
/// let on_gpu1 = copy_peer(&on_gpu0, on_gpu1)?.sync()?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn copy_peer<'a, T: DeviceCopy + Send + Sync>(
    src: &'a DeviceBuffer<T>,
    mut dst: DeviceBuffer<T>,
) -> Result<DeviceOperation<'a, DeviceBuffer<T>>, DriverError> {
    check_len("copy_peer", dst.len(), src.len())?;
    let device = dst.context().ordinal();
    Ok(DeviceOperation::new(device, move |exec| {
        dst.copy_peer_async(exec.stream(), src)?;
        Ok(dst)
    }))
}

/// What [`copy_peer_owned`] yields: the source and the filled destination, once the copy has run.
pub type CopyPeerOwned<T> = DeviceOperation<'static, (DeviceBuffer<T>, DeviceBuffer<T>)>;

/// [`copy_peer`] owning both buffers: yields `(src, dst)` once the copy has completed, so it can
/// be `tokio::spawn`ed.
pub fn copy_peer_owned<T: DeviceCopy + Send + Sync + 'static>(
    src: DeviceBuffer<T>,
    mut dst: DeviceBuffer<T>,
) -> Result<CopyPeerOwned<T>, DriverError> {
    check_len("copy_peer_owned", dst.len(), src.len())?;
    let device = dst.context().ordinal();
    Ok(DeviceOperation::new(device, move |exec| {
        dst.copy_peer_async(exec.stream(), &src)?;
        Ok((src, dst))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_mismatch_is_refused_when_built() {
        let e = check_len("upload", 4, 5).unwrap_err();
        assert!(matches!(e, DriverError::LengthMismatch { operation: "upload", expected: 4, found: 5 }), "{e}");
        assert!(check_len("download", 7, 7).is_ok());
    }
}
