//! NCCL collectives for cuda-oxide: a communicator per GPU of this process, and all-reduce,
//! all-gather, reduce-scatter and broadcast on `cuda_core::DeviceBuffer`s, queued on
//! `cuda_core::CudaStream`s, through cudarc's NCCL bindings (loaded at run time: building needs
//! no NCCL; `cargo oxide setup` installs NVIDIA's `nvidia-nccl-cu13` wheel).
//!
//! ```no_run
//! use cuda_core::{CudaContext, DeviceBuffer};
//! use cuda_nccl::{Communicators, ReduceOp};
//! // One rank per visible GPU.
//! let comms = Communicators::for_devices(0..CudaContext::device_count()?)?;
//! let streams: Vec<_> = comms.iter().map(|c| c.context().new_stream()).collect::<Result<_, _>>()?;
//! let mut grads: Vec<DeviceBuffer<f32>> =
//!     streams.iter().map(|s| DeviceBuffer::zeroed(s, 1 << 20)).collect::<Result<_, _>>()?;
//! // ... each GPU computes its gradients into grads[rank] on streams[rank] ...
//! comms.all_reduce_in_place(&streams, &mut grads, ReduceOp::Avg)?;
//! for s in &streams {
//!     s.synchronize()?;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! | item | what |
//! |---|---|
//! | [`Communicators`] | `ncclCommInitAll` over some GPUs; collectives over all ranks at once, every rank's arguments checked first |
//! | [`Communicator`] | one rank: its collectives alone (inside a [`group`], or one thread per GPU) |
//! | [`NcclType`], [`ReduceOp`] | element types (`i8` … `f64`, `f16`) and reductions (sum, product, max, min, mean) |
//! | [`version`], [`disable_nvlink_multicast`] | the loaded NCCL's version; `NCCL_NVLS_ENABLE=0`, set before NCCL starts |
//!
//! NVLink multicast (NVLS, `cuMulticastCreate`) stays off: NCCL is started with
//! `NCCL_NVLS_ENABLE=0` whatever the environment said, because on the shared multi-GPU hosts
//! this project runs on a program that uses it can take the host's GPUs out of service.
#![warn(missing_docs)]
#![feature(f16)]

mod comm;
mod communicators;
mod error;
mod library;
mod shape;
mod types;

pub use comm::{Communicator, group};
pub use communicators::Communicators;
pub use error::NcclError;
pub use library::{NVLS_ENV, disable_nvlink_multicast, ensure_loaded, version};
pub use types::{NcclType, ReduceOp};
