//! The JSON manifest of a crate's device artifacts (contract §7): kernels, their parameters, payloads.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::abi::ParamKind;

/// The manifest format this crate writes and reads.
pub const MANIFEST_FORMAT_VERSION: u32 = 2;

/// `manifest.json`, also stored inside the bundle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    pub crate_name: String,
    /// The Cargo package the crate belongs to (`CARGO_PKG_NAME`, may have `-`: `my-kernels`);
    /// empty when rustc did not run under cargo. NVIDIA's cuda-oxide names bundles by it.
    #[serde(default)]
    pub package: String,
    /// The crate's artifact folder (`oxide_contract::naming::crate_dir_name`): the crate name,
    /// or with `.bin`/`.test` for a binary or test harness that shares it.
    #[serde(default)]
    pub dir: String,
    pub kernels: Vec<KernelInfo>,
    pub payloads: Vec<PayloadInfo>,
    /// Tool name → its version line (`llc`, `ptxas`, …).
    #[serde(default)]
    pub tools: BTreeMap<String, String>,
    /// Whether `a*b+c` may contract into `fma` (`false` with `--no-fmad`); a load-time link of the
    /// LTOIR payloads uses the same setting (`crate::link::nvjitlink_options`).
    #[serde(default = "default_true")]
    pub fmad: bool,
    /// Device functions of this crate that CUDA C++ can call (docs/interop.md).
    #[serde(default)]
    pub exports: Vec<DeviceFunction>,
    /// CUDA C++ device functions this crate's device code calls, linked in from its sources.
    #[serde(default)]
    pub imports: Vec<DeviceFunction>,
}

fn default_true() -> bool {
    true
}

/// A device function crossing the Rust ⇄ CUDA C++ boundary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceFunction {
    /// The linker symbol (the C name).
    pub symbol: String,
    /// The Rust path of the function or of its declaration.
    pub name: String,
    /// Its C declaration, e.g. `float scale(float x, const float* k)`.
    pub c_decl: String,
}

/// One kernel entry point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelInfo {
    /// The Rust path of the kernel function, with its type arguments for an instance of a
    /// generic kernel (`app::kernels::scale::<f32>`).
    pub name: String,
    /// The name people read: the kernel's own name with its type arguments' paths trimmed to
    /// their last segment (`combine::<f32, Add>` for `app::kernels::combine::<f32, app::ops::Add>`),
    /// for build summaries, `cargo oxide inspect` and error messages. Empty in manifests written
    /// before the backend recorded it: read it through [`KernelInfo::display_name`].
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub display_name: String,
    /// The instance's key ([`crate::naming::kernel_key`]): what the launch methods look it up by.
    pub key: u64,
    /// The PTX entry name ([`crate::naming::entry_name`]).
    pub entry: String,
    pub params: Vec<ParamInfo>,
    #[serde(default)]
    pub launch_bounds: Option<LaunchBounds>,
    #[serde(default)]
    pub cluster_dims: Option<[u32; 3]>,
    /// `#[cooperative_launch]`: every launch of the kernel is cooperative (the host checks that
    /// the whole grid can be resident at once, then sets `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cooperative: bool,
    /// `#[launch_contract(..)]`: checked on every launch of the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_contract: Option<crate::launch_contract::LaunchContract>,
    /// The kernel's unchecked twin and the condition under which the host launches it instead
    /// ([`crate::fast_launch`]); set by the device compiler after optimising. A twin recorded
    /// in a form this version does not read (an older compiler's) is read as none.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::fast_launch::read_lenient")]
    pub fast: Option<crate::fast_launch::FastLaunch>,
}

/// One Rust-level kernel parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamInfo {
    pub name: String,
    pub ty: String,
    pub kind: ParamKind,
    /// Size and alignment of the Rust type (for slices: of the element type).
    pub size: u64,
    pub align: u64,
}

/// `#[launch_bounds(max_threads, min_blocks)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchBounds {
    pub max_threads: u32,
    #[serde(default)]
    pub min_blocks: Option<u32>,
}

/// One device payload of the crate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayloadInfo {
    /// `sm_90`, `sm_90a`; for a fatbin, its lowest arch.
    pub arch: String,
    pub kind: PayloadKind,
    /// File name inside `<artifact_dir>/<crate_name>/`.
    pub file: String,
    /// Lower-case hex SHA-256 of the file ([`crate::sha256_hex`]).
    pub sha256: String,
    pub bytes: u64,
    /// LTOIR only: the CUDA release of the compiler that made it (libNVVM, `nvcc`). Linking it
    /// needs an nvJitLink of that release or newer ([`crate::link::nvjitlink_can_link`]); absent
    /// when unknown (LTOIR a crate names as a file, bundles of older cuda-oxide versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_release: Option<crate::toolkit::CudaRelease>,
}

/// What a payload holds; the discriminant is the `kind` field of a bundle payload entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PayloadKind {
    Ptx = 0,
    Cubin = 1,
    Fatbin = 2,
    Ltoir = 3,
}

impl PayloadKind {
    /// The `u32` stored in the bundle's payload table.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// Inverse of [`PayloadKind::code`].
    pub fn from_code(code: u32) -> Option<PayloadKind> {
        match code {
            0 => Some(PayloadKind::Ptx),
            1 => Some(PayloadKind::Cubin),
            2 => Some(PayloadKind::Fatbin),
            3 => Some(PayloadKind::Ltoir),
            _ => None,
        }
    }

    /// `ptx`, `cubin`, `fatbin`, `ltoir`.
    pub fn name(self) -> &'static str {
        match self {
            PayloadKind::Ptx => "ptx",
            PayloadKind::Cubin => "cubin",
            PayloadKind::Fatbin => "fatbin",
            PayloadKind::Ltoir => "ltoir",
        }
    }
}

impl std::fmt::Display for PayloadKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Manifest {
    /// An empty manifest for `crate_name`.
    pub fn new(crate_name: impl Into<String>) -> Manifest {
        Manifest {
            format_version: MANIFEST_FORMAT_VERSION,
            dir: String::new(),
            crate_name: crate_name.into(),
            package: String::new(),
            kernels: Vec::new(),
            payloads: Vec::new(),
            tools: BTreeMap::new(),
            fmad: true,
            exports: Vec::new(),
            imports: Vec::new(),
        }
    }

    /// The kernel with PTX entry name `entry`.
    pub fn kernel(&self, entry: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.entry == entry)
    }

    /// The kernel instance with key `key` ([`crate::naming::kernel_key`]).
    pub fn kernel_by_key(&self, key: u64) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.key == key)
    }

    /// The kernels a launch by name `name` can mean: the one whose entry is `name`, else those
    /// whose Rust name (without type arguments) ends in `::name` (kernels sharing a name have
    /// keyed entries, see [`crate::naming::entry_name`]).
    pub fn kernels_named(&self, name: &str) -> Vec<&KernelInfo> {
        if let Some(k) = self.kernel(name) {
            return vec![k];
        }
        self.kernels.iter().filter(|k| !k.name.contains('<') && k.name.rsplit("::").next() == Some(name)).collect()
    }

    /// Every entry name, in manifest order.
    pub fn entries(&self) -> Vec<String> {
        self.kernels.iter().map(|k| k.entry.clone()).collect()
    }

    /// Pretty JSON, as written to `manifest.json`.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Parses `manifest.json`.
    pub fn from_json(text: &str) -> Result<Manifest, serde_json::Error> {
        serde_json::from_str(text)
    }
}

impl KernelInfo {
    /// [`Self::display_name`] when recorded, else the last segment of [`Self::name`] (with the
    /// type arguments, which may hold `::` themselves).
    pub fn display_name(&self) -> &str {
        if !self.display_name.is_empty() {
            return &self.display_name;
        }
        let path = self.name.split_once("::<").map_or(self.name.as_str(), |(path, _)| path);
        let start = path.rfind("::").map_or(0, |i| i + 2);
        &self.name[start..]
    }

    /// Number of `kernelParams` entries a launch of this kernel passes.
    pub fn launch_slots(&self) -> usize {
        self.params.iter().map(|p| p.kind.launch_slots()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_name_falls_back_to_the_last_segment() {
        let mut k = sample().kernels[0].clone();
        assert_eq!(k.display_name(), "vecadd");
        k.display_name.clear();
        assert_eq!(k.display_name(), "vecadd");
        k.name = "app::kernels::combine::<f32, app::ops::Add>".into();
        assert_eq!(k.display_name(), "combine::<f32, app::ops::Add>");
        k.display_name = "combine::<f32, Add>".into();
        assert_eq!(k.display_name(), "combine::<f32, Add>");
    }

    pub(crate) fn sample() -> Manifest {
        let mut m = Manifest::new("hello");
        m.kernels.push(KernelInfo {
            name: "hello::kernels::vecadd".into(),
            display_name: "vecadd".into(),
            key: 1,
            entry: "vecadd".into(),
            params: vec![
                ParamInfo { name: "a".into(), ty: "&[f32]".into(), kind: ParamKind::Slice, size: 4, align: 4 },
                ParamInfo {
                    name: "c".into(),
                    ty: "DisjointSlice<f32>".into(),
                    kind: ParamKind::DisjointSlice,
                    size: 4,
                    align: 4,
                },
                ParamInfo { name: "k".into(), ty: "f32".into(), kind: ParamKind::Scalar, size: 4, align: 4 },
                ParamInfo { name: "z".into(), ty: "()".into(), kind: ParamKind::Zst, size: 0, align: 1 },
            ],
            launch_bounds: Some(LaunchBounds { max_threads: 256, min_blocks: None }),
            cluster_dims: Some([4, 1, 1]),
            cooperative: false,
            launch_contract: None,
            fast: None,
        });
        m.payloads.push(PayloadInfo {
            arch: "sm_90".into(),
            kind: PayloadKind::Cubin,
            file: "hello.sm_90.cubin".into(),
            sha256: "00".into(),
            bytes: 1,
            cuda_release: None,
        });
        m.payloads.push(PayloadInfo {
            arch: "sm_90".into(),
            kind: PayloadKind::Ltoir,
            file: "hello.sm_90.ltoir".into(),
            sha256: "00".into(),
            bytes: 1,
            cuda_release: Some(crate::toolkit::CudaRelease::new(13, 5)),
        });
        m.tools.insert("llc".into(), "LLVM version 22.1.4".into());
        m.exports.push(DeviceFunction {
            symbol: "scale".into(),
            name: "hello::scale".into(),
            c_decl: "float scale(float x)".into(),
        });
        m
    }

    #[test]
    fn round_trips_with_contract_spelling() {
        let m = sample();
        let json = m.to_json_pretty();
        for needle in
            ["\"disjoint_slice\"", "\"cubin\"", "\"max_threads\": 256", "\"cluster_dims\"", "\"format_version\": 2"]
        {
            assert!(json.contains(needle), "missing {needle} in {json}");
        }
        assert_eq!(Manifest::from_json(&json).unwrap(), m);
        assert!(json.contains("\"c_decl\": \"float scale(float x)\""), "{json}");
        // The producer's release is written for LTOIR, and left out where unknown.
        assert_eq!(json.matches("\"cuda_release\": \"13.5\"").count(), 1, "{json}");
        assert_eq!(json.matches("cuda_release").count(), 1, "{json}");
        assert_eq!(m.kernels[0].launch_slots(), 5);
        assert_eq!(m.entries(), ["vecadd"]);
        assert!(m.kernel("vecadd").is_some() && m.kernel("nope").is_none());
    }

    #[test]
    fn older_manifests_read_with_defaults() {
        let json = r#"{"format_version":2,"crate_name":"x","kernels":[],"payloads":[]}"#;
        let m = Manifest::from_json(json).unwrap();
        assert!(m.fmad && m.exports.is_empty() && m.imports.is_empty());
        let json = r#"{"format_version":2,"crate_name":"x","kernels":[],"payloads":[
            {"arch":"sm_90","kind":"ltoir","file":"x.ltoir","sha256":"00","bytes":1}]}"#;
        assert_eq!(Manifest::from_json(json).unwrap().payloads[0].cuda_release, None);
    }

    #[test]
    fn payload_kind_codes() {
        for k in [PayloadKind::Ptx, PayloadKind::Cubin, PayloadKind::Fatbin, PayloadKind::Ltoir] {
            assert_eq!(PayloadKind::from_code(k.code()), Some(k));
        }
        assert_eq!(PayloadKind::from_code(4), None);
        assert_eq!(PayloadKind::Fatbin.code(), 2);
    }
}
