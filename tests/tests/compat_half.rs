//! Golden PTX checks (no GPU needed) of the operations added under NVIDIA cuda-oxide's names
//! (issue 10): the `f16x2` FMA variants, `cvt.rz`/`cvt.rna.tf32` conversions, the packed atomic
//! adds, the s8 `mma.sync`, `ptx_asm!` (operands, constants, options), libm's inlined x86 square
//! root, host linking of plain `extern "C"` libdevice declarations, and the refusal of
//! `atom.add.noftz.bf16x2` below sm_90. Every PTX passes `ptxas`.
use std::sync::OnceLock;

use oxide_tests::ptx::Built;
use oxide_tests::*;

const ARCHS: [&str; 2] = ["sm_80", "sm_90"];
const SM90: [&str; 1] = ["sm_90"];

const HALF: &str = r#"
use cuda_device::{DisjointSlice, convert, cuda_module, f16x2, kernel, tcgen05, thread, wmma};

// A plain extern block (no #[device]): the host binary must still link.
unsafe extern "C" {
    fn __nv_sinf(x: f32) -> f32;
}

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn fma_variants(a: &[u32], mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let x = a[idx.get()];
        let v = f16x2::fma_ftz_f16x2(x, x, x) ^ f16x2::fma_sat_f16x2(x, x, x)
            ^ f16x2::fma_ftz_sat_f16x2(x, x, x) ^ f16x2::fma_ftz_relu_f16x2(x, x, x);
        if let Some(o) = out.get_mut(idx) { *o = v; }
    }

    #[kernel]
    pub fn conversions(x: &[f32], mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let (a, b) = (x[idx.get()], x[idx.get() + 1]);
        let v = convert::cvt_rz_f16x2_f32(a, b) ^ convert::cvt_rz_bf16x2_f32(a, b)
            ^ convert::cvt_rna_tf32_f32(a) ^ tcgen05::cvt_f32x2_bf16x2(a, b);
        if let Some(o) = out.get_mut(idx) { *o = v; }
    }

    #[kernel]
    pub fn int8_mma(a: &[u32], mut out: DisjointSlice<i32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let d = unsafe { wmma::mma_m16n8k32_s32_s8([1, 2, 3, 4], [a[i], a[i + 1], a[i + 2], a[i + 3]], [a[i], a[i + 1]]) };
        if let Some(o) = out.get_mut(idx) { *o = d[0] ^ d[3]; }
    }

    /// The `libm` crate's x86 square root, as rustc inlines it into kernels.
    #[kernel]
    pub fn x86_sqrt(x: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let mut v = x[idx.get()];
        unsafe { core::arch::asm!("sqrtss {x}, {x}", x = inout(xmm_reg) v, options(nostack, nomem, pure)) };
        if let Some(o) = out.get_mut(idx) { *o = v; }
    }

    #[kernel]
    pub fn libdevice_extern(x: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let v = unsafe { __nv_sinf(x[idx.get()]) };
        if let Some(o) = out.get_mut(idx) { *o = v; }
    }
}

fn main() {}
"#;

const ATOMICS_AND_ASM: &str = r#"
use cuda_device::{DisjointSlice, atomic, cuda_module, kernel, ptx_asm, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn packed_adds(sums: &mut [u32], mut old: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let p = sums.as_mut_ptr();
        let v = unsafe { atomic::atom_add_f16x2(p, 0x3c00_3c00) ^ atomic::atom_add_bf16x2(p.add(1), 0x3f80_3f80) };
        if let Some(o) = old.get_mut(idx) { *o = v; }
    }

    #[kernel]
    pub fn inline_ptx(x: &[u32], mut out: DisjointSlice<u64>, flags: &mut [u32]) {
        const WIDE: &[u8; 6] = b".wide\0";
        let idx = thread::index_1d();
        let i = idx.get();
        let (sum, wide, lane): (u32, u64, u32);
        let mut acc = x[i] as u64;
        let mut h = x[i] as u16;
        unsafe {
            ptx_asm!("add.u32 %0, %1, %2;", out("=r") sum, in("r") x[i], in("n") 7, options(register_only));
            ptx_asm!("mul%1.u32 %0, %2, %2;", out("=l") wide, in("C") WIDE, in("r") x[i], options(register_only));
            ptx_asm!("add.u64 %0, %0, %1; // $tag", inout("+l") acc, in("l") 11u64, options(register_only, may_diverge));
            ptx_asm!("xor.b16 %0, %0, %1;", inout("+h") h, in("h") 0x5a5au16, options(register_only));
            ptx_asm!("mov.u32 %0, %%laneid;", out("=r") lane);
            ptx_asm!("st.u32 [%0], %1;", in("l") flags.as_mut_ptr(), in("r") sum, clobber("memory"));
        }
        if let Some(o) = out.get_mut(idx) { *o = wide ^ acc ^ h as u64 ^ lane as u64; }
    }
}

fn main() {}
"#;

fn half() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| Built::new("e2e-compat-half", HALF, &ARCHS))
}

fn sm90() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| Built::new("e2e-compat-half-sm90", ATOMICS_AND_ASM, &SM90))
}

#[test]
fn compat_half_ptx_passes_ptxas() {
    half().assert_ptxas();
    sm90().assert_ptxas();
}

#[test]
fn f16x2_fma_modifiers() {
    half().assert_entry_has(
        "fma_variants",
        &["fma.rn.ftz.f16x2", "fma.rn.sat.f16x2", "fma.rn.ftz.sat.f16x2", "fma.rn.ftz.relu.f16x2"],
    );
}

#[test]
fn conversions_round_as_named() {
    half().assert_entry_has(
        "conversions",
        &["cvt.rz.f16x2.f32", "cvt.rz.bf16x2.f32", "cvt.rna.tf32.f32", "cvt.rn.bf16x2.f32"],
    );
}

#[test]
fn int8_mma_is_one_instruction() {
    half().assert_entry_has("int8_mma", &["mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"]);
}

#[test]
fn plain_extern_libdevice_calls_resolve_on_device_and_link_on_host() {
    // The build linked the host binary (Built::new asserts success: without the host stand-in
    // the link fails with "undefined symbol: __nv_sinf"); on the device libdevice defines it.
    for arch in ARCHS {
        let ptx = half().ptx(arch);
        assert!(
            !ptx.lines().any(|l| l.contains(".extern") && l.contains("__nv_sinf")),
            "{arch}: __nv_sinf is left unresolved:\n{ptx}"
        );
    }
}

#[test]
fn libm_x86_square_root_is_the_ieee_one() {
    half().assert_entry_has("x86_sqrt", &["sqrt.rn.f32"]);
}

#[test]
fn packed_atomic_adds() {
    sm90().assert_entry_has("packed_adds", &["atom.add.noftz.f16x2", "atom.add.noftz.bf16x2"]);
}

#[test]
fn ptx_asm_operands_constants_and_options() {
    sm90().assert_entry_has("inline_ptx", &["mul.wide.u32", "%laneid", "// $tag", "xor.b16", "st.u32 [%rd"]);
    let ptx = sm90().ptx("sm_90");
    // Hand-written PTX may use any sm_90 instruction: the module gets PTX ISA 8.6, not sm_90's 7.8.
    assert!(ptx.contains(".version 8.6"), "{ptx}");
    assert!(half().ptx("sm_80").contains(".version 7.0"), "a module without ptx_asm! keeps the arch's lowest ISA");
    let body = oxide_tests::ptx::entry(&ptx, "inline_ptx");
    // `in("n") 7` is written into the text; the `inout` reads and writes one register.
    assert!(body.lines().any(|l| l.contains("add.u32") && l.trim_end().ends_with(", 7;")), "{body}");
    assert!(
        body.lines().any(|l| {
            let ops: Vec<&str> = l.split_whitespace().collect();
            ops.first() == Some(&"add.u64")
                && ops.get(1).map(|d| d.trim_end_matches(',')) == ops.get(2).map(|s| s.trim_end_matches(','))
        }),
        "the inout operand is not tied:\n{body}"
    );
}

#[test]
fn bf16x2_atomic_add_is_refused_before_sm90() {
    let project = TempProject::new(
        "e2e-compat-half-sm80-refusal",
        r#"
use cuda_device::{atomic, cuda_module, kernel};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn add(sums: &mut [u32]) {
        let _ = unsafe { atomic::atom_add_bf16x2(sums.as_mut_ptr(), 0x3f80_3f80) };
    }
}

fn main() {}
"#,
    );
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_80"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "the sm_80 build must fail:\n{err}");
    assert!(err.contains("atom_add_noftz_bf16x2") && err.contains("sm_90"), "{err}");
    assert!(err.contains("src/main.rs:10"), "the error points at the call:\n{err}");
}
