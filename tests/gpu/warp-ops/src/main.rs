//! GPU test: warp operations on random inputs of a length that leaves a partial last warp (the
//! idle lanes still take part, with 0): butterfly-shuffle sums, ballot + popc counts of positive
//! values, `shfl.sync.down` of 64-bit values, `redux.sync` sums, `match.any`, warp max.
//! Every result compared exactly with the CPU.
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread, warp};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck};

#[cuda_module]
mod kernels {
    use super::*;

    /// Per thread: `sums` = its warp's sum, `counts` = positive values in its warp (ballot/popc),
    /// `down` = the 64-bit value of lane + 1 (own value in lane 31), `misc` = redux sum, match-any
    /// mask and warp max.
    #[kernel]
    pub fn warp_ops(
        x: &[i32],
        mut sums: DisjointSlice<i32>,
        mut counts: DisjointSlice<u32>,
        mut down: DisjointSlice<u64>,
        mut misc: DisjointSlice<[u32; 3]>,
    ) {
        let idx = thread::index_1d();
        let i = idx.get();
        let v = if i < x.len() { x[i] } else { 0 };
        let sum = warp::reduce_sum(v);
        let ballot = warp::ballot_sync(warp::FULL_MASK, v > 0);
        let wide = ((v as i64 as u64) << 24) ^ (i as u64);
        let next = warp::shfl_down_sync(warp::FULL_MASK, wide, 1);
        let redux = warp::reduce_add_sync_u32(warp::FULL_MASK, v as u32);
        let same = warp::match_any_sync(warp::FULL_MASK, v & 3);
        let max = warp::reduce_max(v as f64);
        if let Some(o) = sums.get_mut(idx) {
            *o = sum;
        }
        if let Some(o) = counts.get_mut(idx) {
            *o = ballot.count_ones();
        }
        if let Some(o) = down.get_mut(idx) {
            *o = next;
        }
        if let Some(o) = misc.get_mut(idx) {
            *o = [redux, same, max as i32 as u32];
        }
    }
}

const N: usize = 100_003;

fn main() {
    let mut report = Report::new("warp-ops");
    let mut rng = Lcg::from_env_or_clock();
    let (_ctx, stream, module) = report.load(kernels::load);

    report.check("warp_ops", || {
        let x: Vec<i32> = (0..N).map(|_| (rng.next_u32() % 20001) as i32 - 10000).collect();
        let threads = N.div_ceil(256) * 256;
        let val = |i: usize| if i < N { x[i] } else { 0 };

        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let mut sums_dev = ck(DeviceBuffer::from_host(&stream, &vec![i32::MIN; N]), "poison sums")?;
        let mut counts_dev = ck(DeviceBuffer::from_host(&stream, &vec![u32::MAX; N]), "poison counts")?;
        let mut down_dev = ck(DeviceBuffer::from_host(&stream, &vec![u64::MAX; N]), "poison down")?;
        let mut misc_dev = ck(DeviceBuffer::from_host(&stream, &vec![[u32::MAX; 3]; N]), "poison misc")?;
        let config = LaunchConfig::for_num_elems(N as u32);
        ck(module.warp_ops(&stream, config, &x_dev, &mut sums_dev, &mut counts_dev, &mut down_dev, &mut misc_dev), "launch warp_ops")?;
        ck(stream.synchronize(), "synchronize after warp_ops")?;
        let sums = ck(sums_dev.to_host_vec(&stream), "sums back")?;
        let counts = ck(counts_dev.to_host_vec(&stream), "counts back")?;
        let down = ck(down_dev.to_host_vec(&stream), "down back")?;
        let misc = ck(misc_dev.to_host_vec(&stream), "misc back")?;

        let mut errors = Vec::new();
        for w in 0..threads / 32 {
            let lanes = w * 32..w * 32 + 32;
            let sum: i32 = lanes.clone().map(val).sum();
            let count = lanes.clone().filter(|&i| val(i) > 0).count() as u32;
            let max = lanes.clone().map(val).max().unwrap_or(0);
            for i in lanes.clone().filter(|&i| i < N) {
                let lane = i % 32;
                let src = if lane == 31 { i } else { i + 1 };
                let wide = ((val(src) as i64 as u64) << 24) ^ (src as u64);
                let same = lanes.clone().enumerate().filter(|&(_, j)| val(j) & 3 == val(i) & 3).fold(0u32, |m, (l, _)| m | 1 << l);
                let want_misc = [sum as u32, same, max as u32];
                if sums[i] != sum || counts[i] != count || down[i] != wide || misc[i] != want_misc {
                    errors.push(format!(
                        "element {i}: sum {} (cpu {sum}), count {} (cpu {count}), down {:#x} (cpu {wide:#x}), [redux, match, max] {:?} (cpu {want_misc:?})",
                        sums[i], counts[i], down[i], misc[i]
                    ));
                }
            }
        }
        match errors.first() {
            None => Ok(()),
            Some(first) => Err(format!("{} of {N} elements differ; first: {first}", errors.len())),
        }
    });

    report.finish()
}
