//! NCCL over the N GPUs, on the async runtime's streams: every collective and type family
//! against a CPU reference, in and out of place, a group of two, and the arguments refused
//! before anything is queued.

use std::sync::Arc;

use cuda_async::device_context::device_context;
use cuda_core::{CudaContext, CudaStream, DeviceBuffer, DeviceCopy};
use cuda_nccl::{Communicators, NVLS_ENV, NcclError, ReduceOp, group};

use crate::harness::{Lcg, Report, ck, compare};
use crate::placement::download;
use crate::same;

/// Elements per rank: odd, and large enough for NCCL to split it among its channels.
const LEN: usize = 1_000_003;

/// Small integers, as floats too: sums of a few of them are exact in any order.
fn ints(rng: &mut Lcg, len: usize, range: i64) -> Vec<i64> {
    (0..len).map(|_| (rng.next_u64() % (2 * range as u64 + 1)) as i64 - range).collect()
}

/// One buffer per rank, on its stream.
fn per_rank<T: DeviceCopy>(streams: &[Arc<CudaStream>], data: &[Vec<T>]) -> Result<Vec<DeviceBuffer<T>>, String> {
    streams.iter().zip(data).map(|(s, d)| ck(DeviceBuffer::from_host(s, d), "upload")).collect()
}

fn sync_all(streams: &[Arc<CudaStream>]) -> Result<(), String> {
    streams.iter().try_for_each(|s| ck(s.synchronize(), "synchronize a rank's stream"))
}

pub fn checks(report: &mut Report, rng: &mut Lcg, n: usize) {
    let (comms, streams) = report.setup(|| {
        let comms = ck(Communicators::for_devices(0..n), &format!("Communicators::for_devices(0..{n})"))?;
        let (major, minor, patch) = ck(cuda_nccl::version(), "cuda_nccl::version")?;
        println!("NCCL {major}.{minor}.{patch}, {} rank(s)", comms.len());
        // The async runtime's streams: one of each device's pool.
        let streams: Vec<Arc<CudaStream>> = (0..n)
            .map(|d| ck(device_context(d), "device_context").map(|dev| Arc::clone(&dev.streams()[0])))
            .collect::<Result<_, _>>()?;
        Ok((comms, streams))
    });
    let s: &[Arc<CudaStream>] = &streams;

    report.check("nccl_started_with_nvlink_multicast_off", || match std::env::var(NVLS_ENV).as_deref() {
        Ok("0") => Ok(()),
        other => Err(format!("{NVLS_ENV} is {other:?} after NCCL started")),
    });

    report.check("all_reduce_sum_f32_out_of_place", || {
        let data: Vec<Vec<f32>> = (0..n).map(|_| ints(rng, LEN, 1000).iter().map(|&x| x as f32).collect()).collect();
        let want: Vec<f32> = (0..LEN).map(|i| data.iter().map(|d| d[i] as f64).sum::<f64>() as f32).collect();
        let send = per_rank(s, &data)?;
        let mut recv = per_rank(s, &vec![vec![f32::NAN; LEN]; n])?;
        ck(comms.all_reduce(s, &send, &mut recv, ReduceOp::Sum), "all_reduce")?;
        sync_all(s)?;
        for (r, buf) in recv.iter().enumerate() {
            same(&format!("rank {r}'s sum"), &download(buf)?, &want)?;
        }
        same("rank 0's send buffer, unchanged", &download(&send[0])?, &data[0])
    });

    report.check("all_reduce_in_place_max_i32_and_sum_u64", || {
        let data: Vec<Vec<i32>> = (0..n).map(|_| (0..LEN).map(|_| rng.next_u32() as i32).collect()).collect();
        let want: Vec<i32> = (0..LEN).map(|i| data.iter().map(|d| d[i]).max().unwrap()).collect();
        let mut bufs = per_rank(s, &data)?;
        ck(comms.all_reduce_in_place(s, &mut bufs, ReduceOp::Max), "all_reduce_in_place(Max)")?;
        let wide: Vec<Vec<u64>> = (0..n).map(|_| (0..4099).map(|_| rng.next_u64() >> 8).collect()).collect();
        let wide_want: Vec<u64> = (0..4099).map(|i| wide.iter().map(|d| d[i]).sum()).collect();
        // References to buffers work as well as the buffers.
        let mut wide_bufs = per_rank(s, &wide)?;
        let mut refs: Vec<&mut DeviceBuffer<u64>> = wide_bufs.iter_mut().collect();
        ck(comms.all_reduce_in_place(s, &mut refs, ReduceOp::Sum), "all_reduce_in_place(Sum) of references")?;
        sync_all(s)?;
        for r in 0..n {
            same(&format!("rank {r}'s max"), &download(&bufs[r])?, &want)?;
            same(&format!("rank {r}'s u64 sum"), &download(&wide_bufs[r])?, &wide_want)?;
        }
        Ok(())
    });

    report.check("all_reduce_avg_f64_and_sum_f16", || {
        let data: Vec<Vec<f64>> = (0..n).map(|_| (0..LEN).map(|_| rng.next_f64()).collect()).collect();
        let want: Vec<f64> = (0..LEN).map(|i| data.iter().map(|d| d[i]).sum::<f64>() / n as f64).collect();
        let mut bufs = per_rank(s, &data)?;
        ck(comms.all_reduce_in_place(s, &mut bufs, ReduceOp::Avg), "all_reduce_in_place(Avg)")?;
        let halves: Vec<Vec<f16>> = (0..n).map(|_| ints(rng, 4099, 8).iter().map(|&x| x as f16).collect()).collect();
        let halves_want: Vec<f32> = (0..4099).map(|i| halves.iter().map(|d| d[i] as f32).sum()).collect();
        let mut half_bufs = per_rank(s, &halves)?;
        ck(comms.all_reduce_in_place(s, &mut half_bufs, ReduceOp::Sum), "all_reduce_in_place(f16 Sum)")?;
        sync_all(s)?;
        for r in 0..n {
            // A mean of n values: within a few ulps of the float64 reference, whatever the order.
            compare(&format!("rank {r}'s mean"), &download(&bufs[r])?, &want, |g, w| {
                (g - w).abs() <= 1e-12 * (1.0 + w.abs())
            })?;
            let got: Vec<f32> = download(&half_bufs[r])?.iter().map(|&h| h as f32).collect();
            same(&format!("rank {r}'s f16 sum"), &got, &halves_want)?;
        }
        Ok(())
    });

    report.check("all_gather_and_reduce_scatter", || {
        let data: Vec<Vec<f32>> = (0..n).map(|_| rng.vec_f32(LEN)).collect();
        let gathered: Vec<f32> = data.concat();
        let send = per_rank(s, &data)?;
        let mut recv = per_rank(s, &vec![vec![f32::NAN; n * LEN]; n])?;
        ck(comms.all_gather(s, &send, &mut recv), "all_gather")?;
        let scatter: Vec<Vec<i64>> = (0..n).map(|_| ints(rng, n * 4099, 1 << 40)).collect();
        let total: Vec<i64> = (0..n * 4099).map(|i| scatter.iter().map(|d| d[i]).sum()).collect();
        let scatter_send = per_rank(s, &scatter)?;
        let mut scatter_recv = per_rank(s, &vec![vec![i64::MIN; 4099]; n])?;
        ck(comms.reduce_scatter(s, &scatter_send, &mut scatter_recv, ReduceOp::Sum), "reduce_scatter")?;
        sync_all(s)?;
        for r in 0..n {
            compare(&format!("rank {r}'s gather"), &download(&recv[r])?, &gathered, |a, b| a.to_bits() == b.to_bits())?;
            same(
                &format!("rank {r}'s block of the sum"),
                &download(&scatter_recv[r])?,
                &total[r * 4099..(r + 1) * 4099],
            )?;
        }
        Ok(())
    });

    report.check("broadcast_from_the_last_rank", || {
        let root = n - 1;
        let data: Vec<Vec<u8>> = (0..n).map(|_| (0..LEN).map(|_| rng.next_u32() as u8).collect()).collect();
        let mut bufs = per_rank(s, &data)?;
        ck(comms.broadcast(s, &mut bufs, root), "broadcast")?;
        sync_all(s)?;
        for (r, buf) in bufs.iter().enumerate() {
            same(&format!("rank {r}'s copy of rank {root}'s buffer"), &download(buf)?, &data[root])?;
        }
        Ok(())
    });

    report.check("a_group_of_two_collectives_rank_by_rank", || {
        let a: Vec<Vec<u32>> = (0..n).map(|r| vec![r as u32 + 1; 4099]).collect();
        let b: Vec<Vec<f32>> = (0..n).map(|r| vec![(r * r) as f32; 17]).collect();
        let (mut da, mut db) = (per_rank(s, &a)?, per_rank(s, &b)?);
        ck(
            group(|| {
                for (((comm, stream), x), y) in comms.iter().zip(s).zip(&mut da).zip(&mut db) {
                    comm.all_reduce_in_place(stream, x, ReduceOp::Sum)?;
                    comm.all_reduce_in_place(stream, y, ReduceOp::Max)?;
                }
                Ok(())
            }),
            "group(all_reduce, all_reduce)",
        )?;
        sync_all(s)?;
        let sum = (n * (n + 1) / 2) as u32;
        let max = ((n - 1) * (n - 1)) as f32;
        for r in 0..n {
            same(&format!("rank {r}'s sum"), &download(&da[r])?, &vec![sum; 4099])?;
            same(&format!("rank {r}'s max"), &download(&db[r])?, &vec![max; 17])?;
        }
        Ok(())
    });

    report.check("bad_arguments_are_refused_before_anything_is_queued", || {
        let expect_invalid = |what: &str, r: Result<(), NcclError>, needle: &str| match r {
            Err(NcclError::Invalid { message }) if message.contains(needle) => {
                println!("    ({message})");
                Ok(())
            }
            other => Err(format!("{what}: expected an `Invalid` error saying `{needle}`, got {other:?}")),
        };
        let send = per_rank(s, &vec![vec![1.0f32; 64]; n])?;
        let mut recv: Vec<DeviceBuffer<f32>> = per_rank(s, &vec![vec![f32::NAN; 64]; n])?;
        // The last rank's receive buffer one element short.
        let last = n - 1;
        recv[last] = ck(DeviceBuffer::from_host(&s[last], &[f32::NAN; 63]), "upload")?;
        expect_invalid(
            "a short receive buffer",
            comms.all_reduce(s, &send, &mut recv, ReduceOp::Sum),
            "receive buffer must be as long as its send buffer",
        )?;
        expect_invalid(
            "one stream too few",
            comms.all_reduce(&s[..n - 1], &send, &mut recv, ReduceOp::Sum),
            "streams",
        )?;
        expect_invalid("root n", comms.broadcast(s, &mut recv[..], n), "is not a rank")?;
        let other_ctx = ck(CudaContext::new_private(0), "new_private")?;
        let stray = ck(other_ctx.new_stream(), "new_stream")?;
        let mut streams: Vec<Arc<CudaStream>> = s.to_vec();
        streams[0] = stray;
        let mut good = per_rank(s, &vec![vec![1.0f32; 64]; n])?;
        expect_invalid(
            "a stream of another context",
            comms.all_reduce_in_place(&streams, &mut good, ReduceOp::Sum),
            "stream",
        )?;
        expect_invalid("a private context", Communicators::new(&[other_ctx]).map(|_| ()), "primary context")?;
        let ctx0 = ck(CudaContext::new(0), "new")?;
        expect_invalid(
            "device 0 twice",
            Communicators::new(&[Arc::clone(&ctx0), ctx0]).map(|_| ()),
            "both on device 0",
        )?;
        sync_all(s)?;
        // Nothing ran: rank 0's receive buffer (the short one when there is one rank) is still
        // poisoned.
        let untouched = vec![f32::NAN; recv[0].len()];
        compare("rank 0's untouched receive buffer", &download(&recv[0])?, &untouched, |a, b| a.is_nan() && b.is_nan())
    });
}
