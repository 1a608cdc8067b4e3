//! GPU architectures (`sm_90`, `sm_90a`, …): parsing, ordering, PTX ISA versions, and the rules
//! that depend on the architecture (which features need which SM).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Bit set in [`Arch::code`] for arch-specific targets (`sm_90a`): code for them runs only on
/// exactly that SM, never on a later one.
pub const ARCH_SPECIFIC_FLAG: u32 = 1 << 16;

/// Every arch `--arch` accepts, with the lowest PTX ISA version that can target it.
const KNOWN_ARCHS: &[(&str, (u32, u32))] = &[
    ("sm_75", (6, 3)),
    ("sm_80", (7, 0)),
    ("sm_86", (7, 1)),
    ("sm_87", (7, 4)),
    ("sm_89", (7, 8)),
    ("sm_90", (7, 8)),
    ("sm_90a", (8, 0)),
    ("sm_100", (8, 6)),
    ("sm_100a", (8, 6)),
    ("sm_101", (8, 6)),
    ("sm_101a", (8, 6)),
    ("sm_103", (8, 8)),
    ("sm_103a", (8, 8)),
    ("sm_120", (8, 7)),
    ("sm_120a", (8, 7)),
    ("sm_121", (8, 8)),
    ("sm_121a", (8, 8)),
];

/// A GPU architecture to build device code for, such as `sm_90` or `sm_90a`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Arch {
    major: u32,
    minor: u32,
    arch_specific: bool,
}

/// An `--arch` value that names no known architecture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchError {
    /// What the user wrote.
    pub given: String,
}

impl fmt::Display for ArchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown GPU architecture `{}`; known architectures: {}", self.given, Arch::known_names().join(", "))
    }
}

impl std::error::Error for ArchError {}

impl Arch {
    /// The architecture with compute capability `major.minor`, if it is a known one.
    pub fn new(major: u32, minor: u32, arch_specific: bool) -> Result<Arch, ArchError> {
        let arch = Arch { major, minor, arch_specific };
        if arch.known_entry().is_some() { Ok(arch) } else { Err(ArchError { given: arch.to_string() }) }
    }

    /// Parses `sm_90`, `sm_90a` (case-insensitive, surrounding spaces ignored).
    pub fn parse(text: &str) -> Result<Arch, ArchError> {
        let err = || ArchError { given: text.to_string() };
        let lower = text.trim().to_ascii_lowercase();
        let digits = lower.strip_prefix("sm_").ok_or_else(err)?;
        let (digits, arch_specific) = match digits.strip_suffix('a') {
            Some(d) => (d, true),
            None => (digits, false),
        };
        if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let number: u32 = digits.parse().map_err(|_| err())?;
        Arch::new(number / 10, number % 10, arch_specific).map_err(|_| err())
    }

    /// Parses a comma-separated list such as `sm_80,sm_90`, dropping duplicates, keeping order.
    pub fn parse_list(text: &str) -> Result<Vec<Arch>, ArchError> {
        let mut out = Vec::new();
        for part in text.split(',').filter(|p| !p.trim().is_empty()) {
            let arch = Arch::parse(part)?;
            if !out.contains(&arch) {
                out.push(arch);
            }
        }
        if out.is_empty() {
            return Err(ArchError { given: text.to_string() });
        }
        Ok(out)
    }

    /// Names of every known architecture, in ascending order.
    pub fn known_names() -> Vec<&'static str> {
        KNOWN_ARCHS.iter().map(|(name, _)| *name).collect()
    }

    /// Compute capability major version (9 for `sm_90`).
    pub fn major(self) -> u32 {
        self.major
    }

    /// Compute capability minor version (0 for `sm_90`).
    pub fn minor(self) -> u32 {
        self.minor
    }

    /// `true` for `sm_90a`-style targets, whose code runs only on exactly that SM.
    pub fn is_arch_specific(self) -> bool {
        self.arch_specific
    }

    /// The arch-specific target of the same SM (`sm_90` → `sm_90a`), if there is one: it has
    /// every instruction of the plain target and the SM's own (wgmma, setmaxnreg, …).
    pub fn arch_specific_variant(self) -> Option<Arch> {
        if self.arch_specific { None } else { Arch::new(self.major, self.minor, true).ok() }
    }

    /// `major * 10 + minor`: 90 for `sm_90` and `sm_90a`.
    pub fn sm(self) -> u32 {
        self.major * 10 + self.minor
    }

    /// The `sm` field of a bundle payload entry: [`Arch::sm`], plus [`ARCH_SPECIFIC_FLAG`] for
    /// arch-specific targets.
    pub fn code(self) -> u32 {
        self.sm() | if self.arch_specific { ARCH_SPECIFIC_FLAG } else { 0 }
    }

    /// Inverse of [`Arch::code`].
    pub fn from_code(code: u32) -> Result<Arch, ArchError> {
        let sm = code & !ARCH_SPECIFIC_FLAG;
        Arch::new(sm / 10, sm % 10, code & ARCH_SPECIFIC_FLAG != 0)
            .map_err(|_| ArchError { given: format!("sm code {code}") })
    }

    /// The virtual architecture name for PTX `.target` and `ptxas`: `compute_90a`.
    pub fn compute_name(self) -> String {
        format!("compute_{}{}", self.sm(), if self.arch_specific { "a" } else { "" })
    }

    /// The lowest PTX ISA version `(major, minor)` that can target this architecture.
    pub fn min_ptx_isa(self) -> (u32, u32) {
        self.known_entry().map(|(_, isa)| *isa).unwrap_or((7, 0))
    }

    fn known_entry(self) -> Option<&'static (&'static str, (u32, u32))> {
        let name = self.to_string();
        KNOWN_ARCHS.iter().find(|(n, _)| *n == name)
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}{}", self.sm(), if self.arch_specific { "a" } else { "" })
    }
}

impl FromStr for Arch {
    type Err = ArchError;
    fn from_str(s: &str) -> Result<Arch, ArchError> {
        Arch::parse(s)
    }
}

impl Serialize for Arch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Arch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Arch, D::Error> {
        let text = String::deserialize(d)?;
        Arch::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Thread block clusters (and distributed shared memory) exist from this SM on.
pub const CLUSTER_MIN_SM: u32 = 90;

/// `true` when a GPU of compute capability `major.minor` can launch thread block clusters.
pub fn device_has_clusters((major, minor): (u32, u32)) -> bool {
    major * 10 + minor >= CLUSTER_MIN_SM
}

impl Arch {
    /// `true` when code for this arch may use thread block clusters.
    pub fn has_clusters(self) -> bool {
        self.sm() >= CLUSTER_MIN_SM
    }

    /// The oldest arch of a non-empty list (by SM; the first of equals), which target-independent
    /// work such as `opt` is run for.
    pub fn lowest(archs: &[Arch]) -> Option<Arch> {
        archs.iter().copied().min_by_key(|a| a.sm())
    }
}

/// What an instruction family needs from the target: an SM at least `min_sm`, and with
/// `arch_specific` exactly that SM's arch-specific target (`sm_90a`: wgmma and setmaxnreg exist
/// on sm_90a only, not on sm_90 nor on sm_100a).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchNeed {
    /// Lowest SM (`major * 10 + minor`).
    pub min_sm: u32,
    /// Only the arch-specific target of `min_sm`.
    pub arch_specific: bool,
}

impl ArchNeed {
    /// `true` when code for `arch` may use the instruction.
    pub fn met_by(self, arch: Arch) -> bool {
        if self.arch_specific { arch.is_arch_specific() && arch.sm() == self.min_sm } else { arch.sm() >= self.min_sm }
    }
}

impl ArchNeed {
    /// The lowest PTX ISA that has the instruction: 8.0 for the sm_90 families (TMA, mbarrier
    /// transaction counts and `try_wait`, cluster-scoped arrivals, `fence.proxy.async`,
    /// `elect.sync`, wgmma), the ISA of `sm_80` (7.0) for the older ones.
    pub fn min_ptx_isa(self) -> (u32, u32) {
        if self.min_sm >= 90 { (8, 0) } else { (7, 0) }
    }
}

impl fmt::Display for ArchNeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.arch_specific { write!(f, "sm_{}a", self.min_sm) } else { write!(f, "sm_{} or newer", self.min_sm) }
    }
}

/// The target a `cuda_device::intrinsics` function named `name` needs, for the tensor-core
/// families and the few other instructions newer than sm_80 (`None`: any target, or checked
/// elsewhere).
pub fn intrinsic_need(name: &str) -> Option<ArchNeed> {
    let need = |min_sm, arch_specific| Some(ArchNeed { min_sm, arch_specific });
    if name.starts_with("wgmma_") || name.starts_with("setmaxnreg_") {
        return need(90, true);
    }
    if name.starts_with("ldmatrix_") {
        return need(75, false);
    }
    if name.starts_with("mma_")
        || name.starts_with("cp_async_mbarrier_")
        || matches!(name, "mbarrier_init" | "mbarrier_inval" | "mbarrier_arrive" | "mbarrier_test_wait")
    {
        return need(80, false);
    }
    if name.starts_with("stmatrix_")
        || name.starts_with("cp_async_bulk_")
        || name.starts_with("mbarrier_")
        || matches!(
            name,
            "fence_proxy_async_shared_cta"
                | "fence_mbarrier_init_release_cluster"
                | "elect_sync"
                | "prefetch_tensormap"
                | "atom_add_noftz_bf16x2"
        )
    {
        return need(90, false);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_archs() {
        let a = Arch::parse("sm_90").unwrap();
        assert_eq!((a.major(), a.minor(), a.is_arch_specific()), (9, 0, false));
        let a = Arch::parse(" SM_90a ").unwrap();
        assert!(a.is_arch_specific());
        assert_eq!(a.to_string(), "sm_90a");
        assert_eq!(a.compute_name(), "compute_90a");
        assert_eq!(Arch::parse("sm_100a").unwrap().sm(), 100);
        assert_eq!(Arch::parse("sm_86").unwrap().min_ptx_isa(), (7, 1));
        for name in Arch::known_names() {
            assert_eq!(Arch::parse(name).unwrap().to_string(), name);
        }
    }

    #[test]
    fn unknown_arch_lists_known_ones() {
        for bad in ["sm_91", "sm_", "sm90", "compute_90", "sm_9x", "", "sm_0", "sm_1000"] {
            let err = Arch::parse(bad).unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains(&format!("`{bad}`")), "{msg}");
            assert!(msg.contains("sm_80, sm_86"), "{msg}");
        }
    }

    #[test]
    fn arch_codes_round_trip() {
        for name in Arch::known_names() {
            let a = Arch::parse(name).unwrap();
            assert_eq!(Arch::from_code(a.code()).unwrap(), a);
        }
        assert_eq!(Arch::parse("sm_90a").unwrap().code(), 90 | ARCH_SPECIFIC_FLAG);
        assert!(Arch::from_code(91).is_err());
    }

    #[test]
    fn tensor_core_needs() {
        let a = |s: &str| Arch::parse(s).unwrap();
        let wgmma = intrinsic_need("wgmma_m64k16_f32").unwrap();
        assert!(wgmma.met_by(a("sm_90a")) && !wgmma.met_by(a("sm_90")) && !wgmma.met_by(a("sm_100a")));
        assert_eq!(wgmma.to_string(), "sm_90a");
        let mma = intrinsic_need("mma_m16n8k16_bf16_f32").unwrap();
        assert!(mma.met_by(a("sm_80")) && mma.met_by(a("sm_90a")) && !mma.met_by(a("sm_75")));
        assert_eq!(mma.to_string(), "sm_80 or newer");
        assert!(!intrinsic_need("mbarrier_try_wait_parity").unwrap().met_by(a("sm_80")));
        assert!(intrinsic_need("mbarrier_arrive").unwrap().met_by(a("sm_80")));
        for sm80 in ["mbarrier_test_wait", "cp_async_mbarrier_arrive", "cp_async_mbarrier_arrive_noinc"] {
            assert!(intrinsic_need(sm80).unwrap().met_by(a("sm_80")), "{sm80}");
        }
        for sm90 in ["mbarrier_try_wait", "mbarrier_arrive_cluster"] {
            let need = intrinsic_need(sm90).unwrap();
            assert!(!need.met_by(a("sm_80")) && need.met_by(a("sm_90")), "{sm90}");
            // `sm_90` alone is ISA 7.8, which lacks these forms.
            assert_eq!(need.min_ptx_isa(), (8, 0));
            assert!(a("sm_90").min_ptx_isa() < need.min_ptx_isa());
        }
        assert_eq!(intrinsic_need("mbarrier_test_wait").unwrap().min_ptx_isa(), (7, 0));
        assert_eq!(intrinsic_need("sync_threads"), None);
    }

    #[test]
    fn arch_lists() {
        let list = Arch::parse_list("sm_80, sm_90,sm_80").unwrap();
        assert_eq!(list.iter().map(|a| a.to_string()).collect::<Vec<_>>(), ["sm_80", "sm_90"]);
        assert!(Arch::parse_list("").is_err());
        assert!(Arch::parse_list("sm_80,sm_42").unwrap_err().to_string().contains("sm_42"));
    }

    #[test]
    fn cluster_rule() {
        assert!(Arch::parse("sm_90").unwrap().has_clusters());
        assert!(Arch::parse("sm_90a").unwrap().has_clusters());
        assert!(!Arch::parse("sm_89").unwrap().has_clusters());
        assert!(device_has_clusters((9, 0)) && device_has_clusters((12, 0)) && !device_has_clusters((8, 9)));
        let list = Arch::parse_list("sm_90,sm_80,sm_86").unwrap();
        assert_eq!(Arch::lowest(&list).unwrap().to_string(), "sm_80");
        assert_eq!(Arch::lowest(&[]), None);
    }
}
