//! `Communicators`: one NCCL communicator per GPU of this process (`ncclCommInitAll`), and the
//! collectives over all of them at once — every rank's arguments checked, then one NCCL group.

use std::borrow::{Borrow, BorrowMut};
use std::sync::Arc;

use cuda_core::{CudaContext, CudaStream, DeviceBuffer};
use cudarc::nccl::sys;

use crate::comm::{Communicator, describe, group};
use crate::error::NcclError;
use crate::library::{check, ensure_loaded};
use crate::shape::{Collective, check_counts};
use crate::types::{NcclType, ReduceOp};

/// A communicator per GPU, rank `r` on the `r`th device given, in one process: what
/// data-parallel training on one machine all-reduces its gradients with.
///
/// Each collective takes one stream and one buffer (or pair) per rank, in rank order — slices
/// of `DeviceBuffer`s, or of references to them — checks them all (device, stream, lengths),
/// then queues every rank's part in one NCCL group and returns: the result is there once each
/// rank's stream has run it.
///
/// ```no_run
/// use cuda_core::DeviceBuffer;
/// use cuda_nccl::{Communicators, ReduceOp};
/// let comms = Communicators::for_devices(0..cuda_core::CudaContext::device_count()?)?;
/// let streams: Vec<_> = comms.iter().map(|c| c.context().new_stream()).collect::<Result<_, _>>()?;
/// // Rank r holds r + 1 in every element; the sum over n ranks is n (n + 1) / 2.
/// let mut bufs: Vec<DeviceBuffer<f32>> = streams
///     .iter()
///     .enumerate()
///     .map(|(r, s)| DeviceBuffer::from_host(s, &vec![r as f32 + 1.0; 1 << 20]))
///     .collect::<Result<_, _>>()?;
/// comms.all_reduce_in_place(&streams, &mut bufs, ReduceOp::Sum)?;
/// let n = comms.len() as f32;
/// assert!(bufs[0].to_host_vec(&streams[0])?.iter().all(|&x| x == n * (n + 1.0) / 2.0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Communicators {
    comms: Vec<Communicator>,
}

impl Communicators {
    /// A communicator per context, rank `r` on `contexts[r]`'s device. The contexts must be
    /// primary ones ([`CudaContext::new`]: NCCL works on each device's primary context) of
    /// distinct devices. Sets `NCCL_NVLS_ENABLE=0` before NCCL starts
    /// ([`disable_nvlink_multicast`](crate::disable_nvlink_multicast)).
    pub fn new(contexts: &[Arc<CudaContext>]) -> Result<Communicators, NcclError> {
        if contexts.is_empty() {
            return Err(NcclError::invalid("Communicators::new: no devices given; give at least one context"));
        }
        for (rank, ctx) in contexts.iter().enumerate() {
            if !ctx.is_primary() {
                return Err(NcclError::invalid(format!(
                    "Communicators::new: rank {rank} is {}; NCCL works on each device's primary context: open it \
                     with CudaContext::new({})",
                    describe(ctx),
                    ctx.ordinal()
                )));
            }
            if let Some(first) = contexts[..rank].iter().position(|c| c.ordinal() == ctx.ordinal()) {
                return Err(NcclError::invalid(format!(
                    "Communicators::new: ranks {first} and {rank} are both on device {}; NCCL takes one rank per \
                     GPU in a process",
                    ctx.ordinal()
                )));
            }
        }
        ensure_loaded()?;
        let n = contexts.len();
        let devices: Vec<i32> = contexts.iter().map(|c| c.ordinal() as i32).collect();
        let mut raw = vec![std::ptr::null_mut(); n];
        // SAFETY: `raw` has room for `n` communicators and `devices` holds `n` ordinals.
        check(unsafe { sys::ncclCommInitAll(raw.as_mut_ptr(), n as i32, devices.as_ptr()) }, "ncclCommInitAll", None)?;
        // Owned from here: dropping them (also on an error below) destroys them.
        let comms: Vec<Communicator> = raw
            .into_iter()
            .zip(contexts)
            .enumerate()
            .map(|(rank, (comm, ctx))| Communicator::new(comm, rank, n, Arc::clone(ctx)))
            .collect();
        for comm in &comms {
            let mut device = -1;
            // SAFETY: a live communicator; writes one int.
            check(unsafe { sys::ncclCommCuDevice(comm.raw(), &mut device) }, "ncclCommCuDevice", None)?;
            if device != comm.device() as i32 {
                return Err(NcclError::invalid(format!(
                    "NCCL put rank {} on CUDA device {device}, the driver's ordinal is {}: the runtime and the driver \
                     number the GPUs differently (set CUDA_DEVICE_ORDER=PCI_BUS_ID)",
                    comm.rank(),
                    comm.device()
                )));
            }
        }
        Ok(Communicators { comms })
    }

    /// [`new`](Self::new) on the primary contexts of devices `ordinals` (rank `r` on the `r`th).
    pub fn for_devices(ordinals: impl IntoIterator<Item = usize>) -> Result<Communicators, NcclError> {
        let contexts = ordinals.into_iter().map(CudaContext::new).collect::<Result<Vec<_>, _>>()?;
        Communicators::new(&contexts)
    }

    /// The number of ranks (GPUs).
    pub fn len(&self) -> usize {
        self.comms.len()
    }

    /// `false`: there is at least one rank.
    pub fn is_empty(&self) -> bool {
        self.comms.is_empty()
    }

    /// Rank `rank`'s communicator.
    pub fn get(&self, rank: usize) -> Option<&Communicator> {
        self.comms.get(rank)
    }

    /// The communicators in rank order.
    pub fn iter(&self) -> std::slice::Iter<'_, Communicator> {
        self.comms.iter()
    }

    /// The communicators, to hand one to each thread of a thread-per-GPU program.
    pub fn into_vec(self) -> Vec<Communicator> {
        self.comms
    }

    /// All-reduce: every rank's `recv[r]` gets the reduction (`op`) of all ranks' `send`.
    pub fn all_reduce<T, S, B, M>(
        &self,
        streams: &[S],
        send: &[B],
        recv: &mut [M],
        op: ReduceOp,
    ) -> Result<(), NcclError>
    where
        T: NcclType,
        S: AsRef<CudaStream>,
        B: Borrow<DeviceBuffer<T>>,
        M: BorrowMut<DeviceBuffer<T>>,
    {
        self.check(Collective::AllReduce, streams, send.len(), recv.len())?;
        self.collective(Collective::AllReduce, streams, send, recv, |comm, stream, s, r| {
            comm.all_reduce(stream, s, r, op)
        })
    }

    /// All-reduce in place: every rank's `bufs[r]` becomes the reduction of all of them.
    pub fn all_reduce_in_place<T, S, M>(&self, streams: &[S], bufs: &mut [M], op: ReduceOp) -> Result<(), NcclError>
    where
        T: NcclType,
        S: AsRef<CudaStream>,
        M: BorrowMut<DeviceBuffer<T>>,
    {
        self.check(Collective::InPlace, streams, bufs.len(), bufs.len())?;
        self.in_place(Collective::InPlace, streams, bufs, |comm, stream, b| comm.all_reduce_in_place(stream, b, op))
    }

    /// All-gather: every rank's `recv[r]` (`len()` times as long as its `send`) gets all
    /// ranks' `send`, rank 0's first.
    pub fn all_gather<T, S, B, M>(&self, streams: &[S], send: &[B], recv: &mut [M]) -> Result<(), NcclError>
    where
        T: NcclType,
        S: AsRef<CudaStream>,
        B: Borrow<DeviceBuffer<T>>,
        M: BorrowMut<DeviceBuffer<T>>,
    {
        self.check(Collective::AllGather, streams, send.len(), recv.len())?;
        self.collective(Collective::AllGather, streams, send, recv, |comm, stream, s, r| comm.all_gather(stream, s, r))
    }

    /// Reduce-scatter: rank `r`'s `recv[r]` gets block `r` (of `len()` blocks as long as
    /// `recv[r]`) of the reduction of all ranks' `send`.
    pub fn reduce_scatter<T, S, B, M>(
        &self,
        streams: &[S],
        send: &[B],
        recv: &mut [M],
        op: ReduceOp,
    ) -> Result<(), NcclError>
    where
        T: NcclType,
        S: AsRef<CudaStream>,
        B: Borrow<DeviceBuffer<T>>,
        M: BorrowMut<DeviceBuffer<T>>,
    {
        self.check(Collective::ReduceScatter, streams, send.len(), recv.len())?;
        self.collective(Collective::ReduceScatter, streams, send, recv, |comm, stream, s, r| {
            comm.reduce_scatter(stream, s, r, op)
        })
    }

    /// Broadcast in place: every rank's `bufs[r]` gets rank `root`'s.
    pub fn broadcast<T, S, M>(&self, streams: &[S], bufs: &mut [M], root: usize) -> Result<(), NcclError>
    where
        T: NcclType,
        S: AsRef<CudaStream>,
        M: BorrowMut<DeviceBuffer<T>>,
    {
        let collective = Collective::Broadcast { root };
        self.check(collective, streams, bufs.len(), bufs.len())?;
        self.in_place(collective, streams, bufs, |comm, stream, b| comm.broadcast(stream, b, root))
    }

    /// One stream and one buffer (or pair) per rank.
    fn check<S>(&self, collective: Collective, streams: &[S], send: usize, recv: usize) -> Result<(), NcclError> {
        let n = self.len();
        if streams.len() != n || send != n || recv != n {
            return Err(NcclError::invalid(format!(
                "{}: {n} ranks need {n} streams and {n} buffers{}; got {} streams and {}",
                collective.name(),
                if send == recv && matches!(collective, Collective::InPlace | Collective::Broadcast { .. }) {
                    ""
                } else {
                    " of each kind"
                },
                streams.len(),
                if send == recv {
                    format!("{send} buffers")
                } else {
                    format!("{send} send and {recv} receive buffers")
                }
            )));
        }
        Ok(())
    }

    /// Checks every rank, then runs `each` for every rank in one group.
    fn collective<T, S, B, M>(
        &self,
        collective: Collective,
        streams: &[S],
        send: &[B],
        recv: &mut [M],
        each: impl Fn(&Communicator, &CudaStream, &DeviceBuffer<T>, &mut DeviceBuffer<T>) -> Result<(), NcclError>,
    ) -> Result<(), NcclError>
    where
        S: AsRef<CudaStream>,
        B: Borrow<DeviceBuffer<T>>,
        M: BorrowMut<DeviceBuffer<T>>,
    {
        let mut lens = Vec::with_capacity(self.len());
        for (((comm, stream), s), r) in self.comms.iter().zip(streams).zip(send).zip(recv.iter()) {
            let (s, r): (&DeviceBuffer<T>, &DeviceBuffer<T>) = (s.borrow(), Borrow::borrow(r));
            comm.prepare(collective, stream.as_ref(), s, r)?;
            lens.push((s.len(), r.len()));
        }
        check_counts(collective, self.len(), &lens)?;
        group(|| {
            for (((comm, stream), s), r) in self.comms.iter().zip(streams).zip(send).zip(recv.iter_mut()) {
                each(comm, stream.as_ref(), s.borrow(), r.borrow_mut())?;
            }
            Ok(())
        })
    }

    /// [`collective`](Self::collective) for the in-place ones: one buffer per rank.
    fn in_place<T, S, M>(
        &self,
        collective: Collective,
        streams: &[S],
        bufs: &mut [M],
        each: impl Fn(&Communicator, &CudaStream, &mut DeviceBuffer<T>) -> Result<(), NcclError>,
    ) -> Result<(), NcclError>
    where
        S: AsRef<CudaStream>,
        M: BorrowMut<DeviceBuffer<T>>,
    {
        let mut lens = Vec::with_capacity(self.len());
        for ((comm, stream), b) in self.comms.iter().zip(streams).zip(bufs.iter()) {
            let b: &DeviceBuffer<T> = Borrow::borrow(b);
            comm.prepare(collective, stream.as_ref(), b, b)?;
            lens.push((b.len(), b.len()));
        }
        check_counts(collective, self.len(), &lens)?;
        group(|| {
            for ((comm, stream), b) in self.comms.iter().zip(streams).zip(bufs.iter_mut()) {
                each(comm, stream.as_ref(), b.borrow_mut())?;
            }
            Ok(())
        })
    }
}

impl<'a> IntoIterator for &'a Communicators {
    type Item = &'a Communicator;
    type IntoIter = std::slice::Iter<'a, Communicator>;

    fn into_iter(self) -> Self::IntoIter {
        self.comms.iter()
    }
}
