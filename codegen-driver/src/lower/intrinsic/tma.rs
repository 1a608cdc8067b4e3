//! Tensor memory accelerator (sm_90): `cp.async.bulk.tensor` 2D/3D tile loads into shared memory
//! completing on an mbarrier (also multicast to the blocks of a cluster), 2D/3D tile stores from
//! shared memory in bulk groups, their commit and waits, `prefetch.tensormap`, and the plain bulk
//! copy (`cp.async.bulk`, no tensor map) of contiguous bytes into shared memory onto an mbarrier.
//! The tensor map is a generic address (kernel parameter or global memory) of a 128-byte
//! `CUtensorMap`.

use rustc_codegen_ssa::traits::*;

use super::super::builder::Builder;
use super::asm::{self, Effect};

/// Builds the body of the TMA intrinsic `name`; `false` if `name` is not one.
pub fn build(bx: &mut Builder<'_, '_>, name: &str) -> bool {
    let mem = Effect::Memory;
    match name {
        "cp_async_bulk_tensor_2d_g2s" => {
            let (dst, map, x, y, bar) =
                (bx.get_param(0), bx.get_param(1), bx.get_param(2), bx.get_param(3), bx.get_param(4));
            let (dst, bar) = (asm::shared_addr(bx, dst), asm::shared_addr(bx, bar));
            let text = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];";
            asm::call(bx, &[], text, "r,l,r,r,r", &[dst, map, x, y, bar], mem);
        }
        "cp_async_bulk_tensor_2d_s2g" => {
            let (map, x, y, src) = (bx.get_param(0), bx.get_param(1), bx.get_param(2), bx.get_param(3));
            let src = asm::shared_addr(bx, src);
            let text = "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $2}], [$3];";
            asm::call(bx, &[], text, "l,r,r,r", &[map, x, y, src], mem);
        }
        "cp_async_bulk_tensor_3d_g2s" => {
            let p: Vec<_> = (0..6).map(|i| bx.get_param(i)).collect();
            let (dst, bar) = (asm::shared_addr(bx, p[0]), asm::shared_addr(bx, p[5]));
            let text = "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4}], [$5];";
            asm::call(bx, &[], text, "r,l,r,r,r,r", &[dst, p[1], p[2], p[3], p[4], bar], mem);
        }
        "cp_async_bulk_tensor_3d_s2g" => {
            let p: Vec<_> = (0..5).map(|i| bx.get_param(i)).collect();
            let src = asm::shared_addr(bx, p[4]);
            let text = "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [$0, {$1, $2, $3}], [$4];";
            asm::call(bx, &[], text, "l,r,r,r,r", &[p[0], p[1], p[2], p[3], src], mem);
        }
        "cp_async_bulk_tensor_2d_g2s_multicast" => {
            let p: Vec<_> = (0..6).map(|i| bx.get_param(i)).collect();
            let (dst, bar) = (asm::shared_addr(bx, p[0]), asm::shared_addr(bx, p[4]));
            let text = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [$0], [$1, {$2, $3}], [$4], $5;";
            asm::call(bx, &[], text, "r,l,r,r,r,h", &[dst, p[1], p[2], p[3], bar, p[5]], mem);
        }
        "cp_async_bulk_tensor_3d_g2s_multicast" => {
            let p: Vec<_> = (0..7).map(|i| bx.get_param(i)).collect();
            let (dst, bar) = (asm::shared_addr(bx, p[0]), asm::shared_addr(bx, p[5]));
            let text = "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [$0], [$1, {$2, $3, $4}], [$5], $6;";
            asm::call(bx, &[], text, "r,l,r,r,r,r,h", &[dst, p[1], p[2], p[3], p[4], bar, p[6]], mem);
        }
        "cp_async_bulk_g2s" => {
            let (dst, src, bytes, bar) = (bx.get_param(0), bx.get_param(1), bx.get_param(2), bx.get_param(3));
            let (dst, bar) = (asm::shared_addr(bx, dst), asm::shared_addr(bx, bar));
            let text = "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1], $2, [$3];";
            asm::call(bx, &[], text, "r,l,r,r", &[dst, src, bytes, bar], mem);
        }
        "cp_async_bulk_commit_group" => {
            asm::call(bx, &[], "cp.async.bulk.commit_group;", "", &[], mem);
        }
        "cp_async_bulk_wait_group_read0" => {
            asm::call(bx, &[], "cp.async.bulk.wait_group.read 0;", "", &[], mem);
        }
        "cp_async_bulk_wait_group_read1" => {
            asm::call(bx, &[], "cp.async.bulk.wait_group.read 1;", "", &[], mem);
        }
        "cp_async_bulk_wait_group0" => {
            asm::call(bx, &[], "cp.async.bulk.wait_group 0;", "", &[], mem);
        }
        "prefetch_tensormap" => {
            let map = bx.get_param(0);
            asm::call(bx, &[], "prefetch.tensormap [$0];", "l", &[map], mem);
        }
        _ => return false,
    }
    bx.ret_void();
    true
}
