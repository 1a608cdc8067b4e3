// The cluster kernels of the cluster-neighbour GPU test: included by its main.rs, and built on
// its own (with an empty `main`) by tests/tests/device_api.rs for the golden PTX checks.
use cuda_device::{DisjointSlice, SharedArray, cluster, cluster_launch, cuda_module, kernel, sync_threads, thread};

#[cuda_module]
pub mod kernels {
    use super::*;

    pub const THREADS: usize = 128;

    /// `out[i]` = the input element of the same thread in the neighbouring block of the cluster,
    /// `ranks[i]` = `rank * 100 + blocks per cluster`.
    #[kernel]
    #[cluster_launch(4, 1, 1)]
    pub fn neighbour(x: &[u32], mut out: DisjointSlice<u32>, mut ranks: DisjointSlice<u32>) {
        static mut MINE: SharedArray<u32, THREADS> = SharedArray::UNINIT;
        let idx = thread::index_1d();
        let tid = thread::threadIdx_x() as usize;
        let rank = cluster::block_rank();
        let blocks = cluster::num_blocks();
        let v = if idx.get() < x.len() { x[idx.get()] } else { 0 };
        // SAFETY: each thread writes its own slot; others read it only after the cluster barrier.
        unsafe { MINE[tid] = v };
        cluster::sync();
        let remote = cluster::map_shared_rank(SharedArray::as_raw_mut_ptr(&raw mut MINE), (rank + 1) % blocks);
        // SAFETY: `tid < THREADS`; the neighbour wrote this slot before the barrier and keeps
        // its shared memory until the second barrier.
        let theirs = unsafe { remote.add(tid).read() };
        cluster::sync();
        if let Some(o) = out.get_mut(idx) {
            *o = theirs;
        }
        if let Some(r) = ranks.get_mut(idx) {
            *r = rank * 100 + blocks;
        }
    }

    /// `out[block]` = `rank * 100 + 42`, written by thread 0 into shared memory before both
    /// barriers and read back by thread 0 after them (NVIDIA's cluster example, test 2).
    #[kernel]
    #[cluster_launch(4, 1, 1)]
    pub fn leader_broadcast(mut out: DisjointSlice<u32>) {
        static mut SLOT: SharedArray<u32, 1> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x();
        if tid == 0 {
            // SAFETY: one writer (thread 0); the others pass the barriers without touching it.
            unsafe { SLOT[0] = cluster::block_rank() * 100 + 42 };
        }
        sync_threads();
        cluster::sync();
        if tid == 0 {
            let block = thread::blockIdx_x() as usize;
            if block < out.len() {
                // SAFETY: one thread per block writes element `block`; read after the barrier.
                unsafe { *out.get_unchecked_mut(block) = SLOT[0] };
            }
        }
    }
}
