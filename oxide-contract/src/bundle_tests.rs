//! Unit tests of the bundle layout: round trips, damaged input, payload choice.

use super::*;
use crate::manifest::{KernelInfo, Manifest};

fn code(name: &str) -> u32 {
    Arch::parse(name).unwrap().code()
}

fn manifest() -> Manifest {
    let mut m = Manifest::new("hello");
    m.kernels.push(KernelInfo {
        name: "hello::vecadd".into(),
        display_name: String::new(),
        key: 1,
        entry: "vecadd".into(),
        params: vec![],
        launch_bounds: None,
        cluster_dims: None,
        cooperative: false,
        launch_contract: None,
        fast: None,
    });
    m
}

fn sample_bytes() -> Vec<u8> {
    let payloads = [
        Payload { kind: PayloadKind::Ptx, sm: code("sm_80"), bytes: b".version 7.0\n.target sm_80\n" },
        Payload { kind: PayloadKind::Cubin, sm: code("sm_90"), bytes: &[0x7f, b'E', b'L', b'F', 1, 2, 3] },
        Payload { kind: PayloadKind::Fatbin, sm: code("sm_80"), bytes: &[] },
    ];
    write_bundle(&manifest(), &payloads)
}

#[test]
fn round_trip() {
    let bytes = sample_bytes();
    let b = Bundle::parse(&bytes).unwrap();
    assert_eq!(b.version, VERSION);
    assert_eq!(b.manifest, manifest());
    assert_eq!(b.payloads.len(), 3);
    assert_eq!(b.payloads[0].bytes, b".version 7.0\n.target sm_80\n");
    assert_eq!(b.payloads[1].kind, PayloadKind::Cubin);
    assert_eq!(b.payloads[1].arch_name(), "sm_90");
    assert_eq!(b.payloads[2].bytes, b"");
    for p in &b.payloads {
        let offset = p.bytes.as_ptr() as usize - bytes.as_ptr() as usize;
        assert_eq!(offset % PAYLOAD_ALIGN, 0);
    }
    assert_eq!(&bytes[..8], b"CUOXBNDL");
    assert_eq!(u64_at(&bytes, 16), bytes.len() as u64);
}

#[test]
fn empty_bundle_round_trips() {
    let bytes = write_bundle(&Manifest::new("x"), &[]);
    let b = Bundle::parse(&bytes).unwrap();
    assert!(b.payloads.is_empty());
    assert_eq!(b.manifest.crate_name, "x");
}

#[test]
fn trailing_bytes_are_ignored() {
    let mut bytes = sample_bytes();
    bytes.extend_from_slice(&[0xAA; 37]);
    assert_eq!(Bundle::parse(&bytes).unwrap().payloads.len(), 3);
}

#[test]
fn from_symbol_reads_length_from_header() {
    let mut bytes = sample_bytes();
    let len = bytes.len();
    bytes.extend_from_slice(&[0u8; 64]);
    let leaked: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    let b = unsafe { Bundle::from_symbol(leaked.as_ptr()) }.unwrap();
    assert_eq!(b.payloads.len(), 3);
    let last = b.payloads[1].bytes.as_ptr() as usize + b.payloads[1].bytes.len();
    assert!(last <= leaked.as_ptr() as usize + len);
    let not_bundle: &'static [u8] = Box::leak(vec![0u8; HEADER_LEN].into_boxed_slice());
    assert_eq!(unsafe { Bundle::from_symbol(not_bundle.as_ptr()) }, Err(BundleError::BadMagic));
    assert!(unsafe { Bundle::from_symbol(std::ptr::null()) }.is_err());
}

#[test]
fn every_truncation_is_an_error_not_a_panic() {
    let bytes = sample_bytes();
    for cut in 0..bytes.len() {
        assert!(Bundle::parse(&bytes[..cut]).is_err(), "cut at {cut} parsed");
    }
    assert!(matches!(Bundle::parse(&bytes[..20]), Err(BundleError::Truncated { needed: 40, available: 20 })));
    assert!(matches!(Bundle::parse(&bytes[..100]), Err(BundleError::Truncated { .. })));
}

#[test]
fn corrupt_fields_are_reported() {
    let good = sample_bytes();
    let patch = |at: usize, value: &[u8]| {
        let mut b = good.clone();
        b[at..at + value.len()].copy_from_slice(value);
        b
    };
    assert_eq!(Bundle::parse(&patch(0, b"XXXX")), Err(BundleError::BadMagic));
    assert_eq!(Bundle::parse(&patch(8, &2u32.to_le_bytes())), Err(BundleError::UnsupportedVersion(2)));
    assert!(matches!(Bundle::parse(&patch(12, &u32::MAX.to_le_bytes())), Err(BundleError::Corrupt(_))));
    assert!(matches!(Bundle::parse(&patch(24, &u64::MAX.to_le_bytes())), Err(BundleError::Corrupt(_))));
    assert!(matches!(Bundle::parse(&patch(24, &0u64.to_le_bytes())), Err(BundleError::Corrupt(_))));
    // First payload's kind, then its offset pointing past the end.
    assert_eq!(Bundle::parse(&patch(40, &9u32.to_le_bytes())), Err(BundleError::UnknownPayloadKind(9)));
    assert!(matches!(Bundle::parse(&patch(48, &(u64::MAX - 1).to_le_bytes())), Err(BundleError::Corrupt(_))));
    // Manifest bytes that are not JSON.
    let manifest_at = u64_at(&good, 24) as usize;
    assert!(matches!(Bundle::parse(&patch(manifest_at, b"!")), Err(BundleError::Manifest(_))));
    for e in [BundleError::BadMagic, BundleError::UnsupportedVersion(2), BundleError::Corrupt("x".into())] {
        assert!(e.to_string().contains("bundle"), "{e}");
    }
}

fn pick(payloads: &[(PayloadKind, &str)], device: (u32, u32)) -> Result<usize, NoPayload> {
    select(payloads.iter().map(|(k, a)| (*k, code(a))), device)
}

use PayloadKind::{Cubin, Fatbin, Ltoir, Ptx};

#[test]
fn exact_cubin_wins() {
    let p = [(Ptx, "sm_90"), (Fatbin, "sm_80"), (Cubin, "sm_80"), (Cubin, "sm_90")];
    assert_eq!(pick(&p, (9, 0)), Ok(3));
    assert_eq!(pick(&p, (8, 0)), Ok(2));
    // Arch-specific cubin preferred on its own SM.
    let p = [(Cubin, "sm_90"), (Cubin, "sm_90a")];
    assert_eq!(pick(&p, (9, 0)), Ok(1));
}

#[test]
fn fatbin_before_compatible_cubin_and_ptx() {
    let p = [(Ptx, "sm_80"), (Cubin, "sm_80"), (Fatbin, "sm_80")];
    assert_eq!(pick(&p, (8, 6)), Ok(2));
    assert_eq!(pick(&p, (9, 0)), Ok(2));
    // A fatbin whose lowest arch is above the device is skipped.
    let p = [(Fatbin, "sm_90"), (Ptx, "sm_80")];
    assert_eq!(pick(&p, (8, 6)), Ok(1));
}

#[test]
fn same_major_cubin_before_ptx() {
    let p = [(Ptx, "sm_80"), (Cubin, "sm_80")];
    assert_eq!(pick(&p, (8, 6)), Ok(1));
    // A cubin of another major never runs: PTX JIT instead.
    assert_eq!(pick(&p, (9, 0)), Ok(0));
}

#[test]
fn highest_ptx_not_above_device() {
    let p = [(Ptx, "sm_80"), (Ptx, "sm_90"), (Ptx, "sm_100"), (Ltoir, "sm_90")];
    assert_eq!(pick(&p, (9, 0)), Ok(1));
    assert_eq!(pick(&p, (12, 0)), Ok(2));
    // Arch-specific PTX only on exactly its SM.
    let p = [(Ptx, "sm_80"), (Ptx, "sm_90a")];
    assert_eq!(pick(&p, (9, 0)), Ok(1));
    assert_eq!(pick(&p, (10, 0)), Ok(0));
}

#[test]
fn nothing_fits_names_archs_and_fix() {
    let p = [(Cubin, "sm_90"), (Ptx, "sm_90")];
    let err = pick(&p, (8, 0)).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("compute capability 8.0"), "{msg}");
    assert!(msg.contains("cubin sm_90, ptx sm_90"), "{msg}");
    assert!(msg.contains("--arch sm_80"), "{msg}");
    assert!(pick(&[], (9, 0)).unwrap_err().to_string().contains("no payloads"));
    // Arch-specific code on another SM: the message says where it runs.
    let err = pick(&[(Cubin, "sm_100a"), (Ptx, "sm_100a")], (9, 0)).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("(sm_90, compute capability 9.0)"), "{msg}");
    assert!(msg.contains("cubin sm_100a, ptx sm_100a"), "{msg}");
    assert!(msg.contains("`sm_100a` code runs only on sm_100 GPUs"), "{msg}");
    assert!(msg.contains("rebuild with `cargo oxide build --arch sm_90`"), "{msg}");
    assert_eq!(err.device_arch(), "sm_90");
}

fn choices(payloads: &[(PayloadKind, &str)], device: (u32, u32)) -> Vec<(PayloadKind, Vec<usize>)> {
    candidates(payloads.iter().map(|(k, a)| (*k, code(a))), device)
        .unwrap()
        .into_iter()
        .map(|c| (c.kind, c.payloads))
        .collect()
}

#[test]
fn candidates_fall_back_from_cubin_to_ptx_to_ltoir() {
    // An sm_80-only build on an sm_90 GPU: the PTX JIT, then the LTOIR linked for sm_90.
    let p = [(Cubin, "sm_80"), (Ptx, "sm_80"), (Ltoir, "sm_80"), (Ltoir, "sm_80")];
    assert_eq!(choices(&p, (9, 0)), [(Ptx, vec![1]), (Ltoir, vec![2, 3])]);
    // On sm_86 the sm_80 cubin runs first; every PTX that runs follows, highest first.
    let p = [(Ptx, "sm_75"), (Cubin, "sm_80"), (Ptx, "sm_80"), (Ltoir, "sm_86"), (Ltoir, "sm_80")];
    assert_eq!(
        choices(&p, (8, 6)),
        [(Cubin, vec![1]), (Ptx, vec![2]), (Ptx, vec![0]), (Ltoir, vec![3]), (Ltoir, vec![4])]
    );
    // LTOIR alone is a way to load (nvJitLink at load time).
    assert_eq!(pick(&[(Ltoir, "sm_80")], (8, 0)), Ok(0));
    assert!(pick(&[(Ltoir, "sm_90")], (8, 0)).is_err());
}

#[test]
fn bundle_select_payload() {
    let bytes = sample_bytes();
    let b = Bundle::parse(&bytes).unwrap();
    assert_eq!(b.select_payload((9, 0)).unwrap().kind, Cubin);
    assert_eq!(b.select_payload((8, 6)).unwrap().kind, Fatbin);
    assert!(b.select_payload((7, 5)).is_err());
}

#[test]
fn a_section_holds_bundles_and_padding() {
    let one = sample_bytes();
    let mut section = vec![0u8; 16];
    section.extend_from_slice(&one);
    section.resize(section.len().next_multiple_of(PAYLOAD_ALIGN) + 32, 0);
    section.extend_from_slice(&one);
    let bundles = parse_section(&section).unwrap();
    assert_eq!(bundles.len(), 2);
    assert_eq!(bundles[1].manifest.crate_name, "hello");
    assert!(parse_section(&[0u8; 48]).unwrap().is_empty());
    let mut junk = vec![0u8; 16];
    junk.extend_from_slice(b"not a bundle at all, no magic here..........");
    assert!(matches!(parse_section(&junk), Err(BundleError::Corrupt(_))));
}
