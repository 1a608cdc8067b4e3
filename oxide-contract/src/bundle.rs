//! The artifact bundle embedded in host binaries (contract §6): layout v1, parser, payload choice,
//! and (`build` feature) the writer.
//!
//! ```text
//! 0   [u8; 8]  magic b"CUOXBNDL"
//! 8   u32      version = 1
//! 12  u32      payload_count
//! 16  u64      total_len (whole bundle, header included)
//! 24  u64      manifest_offset   32 u64 manifest_len
//! 40  payload_count × { u32 kind, u32 sm, u64 offset, u64 len }
//! ..  manifest bytes, payloads (each 16-byte aligned)
//! ```
//! All integers little endian. `sm` is [`crate::arch::Arch::code`]; for a fatbin, the code of
//! the lowest arch it holds.

use std::fmt;

use crate::arch::{ARCH_SPECIFIC_FLAG, Arch};
use crate::manifest::{Manifest, PayloadKind};

/// First eight bytes of every bundle.
pub const MAGIC: [u8; 8] = *b"CUOXBNDL";
/// The layout version this crate writes and reads.
pub const VERSION: u32 = 1;
/// Size of the fixed header.
pub const HEADER_LEN: usize = 40;
/// Size of one payload table entry.
pub const ENTRY_LEN: usize = 24;
/// Alignment of every payload, relative to the start of the bundle.
pub const PAYLOAD_ALIGN: usize = 16;
/// Largest `total_len` [`Bundle::from_symbol`] believes (guards against reading a wild pointer).
pub const MAX_BUNDLE_LEN: u64 = 1 << 34;

/// One device image in a bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Payload<'a> {
    pub kind: PayloadKind,
    /// [`Arch::code`] of the arch it was built for (lowest arch for a fatbin).
    pub sm: u32,
    pub bytes: &'a [u8],
}

impl Payload<'_> {
    /// `sm_90`, `sm_90a`, or `sm code N` for a code no [`Arch`] knows.
    pub fn arch_name(&self) -> String {
        arch_name(self.sm)
    }
}

fn arch_name(code: u32) -> String {
    match Arch::from_code(code) {
        Ok(arch) => arch.to_string(),
        Err(_) => {
            let sm = code & !ARCH_SPECIFIC_FLAG;
            format!("sm_{sm}{}", if code & ARCH_SPECIFIC_FLAG != 0 { "a" } else { "" })
        }
    }
}

/// A parsed bundle, borrowing its payloads from the bytes it was parsed from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bundle<'a> {
    pub version: u32,
    pub manifest: Manifest,
    pub payloads: Vec<Payload<'a>>,
}

/// Why bytes are not a valid bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BundleError {
    /// Fewer bytes than the header or `total_len` says.
    Truncated {
        needed: u64,
        available: u64,
    },
    BadMagic,
    UnsupportedVersion(u32),
    /// A manifest or payload range outside the bundle, or a nonsensical header field.
    Corrupt(String),
    UnknownPayloadKind(u32),
    Manifest(String),
}

impl fmt::Display for BundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BundleError::Truncated { needed, available } => {
                write!(f, "device code bundle is truncated: needs {needed} bytes, has {available}")
            }
            BundleError::BadMagic => write!(f, "not a cuda-oxide device code bundle (bad magic)"),
            BundleError::UnsupportedVersion(v) => write!(
                f,
                "device code bundle has layout version {v}, this runtime reads version {VERSION}; \
                 rebuild with the same cuda-oxide version as the runtime"
            ),
            BundleError::Corrupt(what) => write!(f, "device code bundle is corrupt: {what}"),
            BundleError::UnknownPayloadKind(k) => write!(f, "device code bundle has a payload of unknown kind {k}"),
            BundleError::Manifest(e) => write!(f, "device code bundle has an unreadable manifest: {e}"),
        }
    }
}

impl std::error::Error for BundleError {}

/// Serialises `manifest` and `payloads` into a bundle (layout v1).
#[cfg(feature = "build")]
pub fn write_bundle(manifest: &Manifest, payloads: &[Payload<'_>]) -> Vec<u8> {
    let manifest_json = serde_json::to_vec(manifest).unwrap_or_default();
    let table_end = HEADER_LEN + ENTRY_LEN * payloads.len();
    let manifest_offset = table_end;
    let mut offsets = Vec::with_capacity(payloads.len());
    let mut cursor = manifest_offset + manifest_json.len();
    for p in payloads {
        cursor = cursor.next_multiple_of(PAYLOAD_ALIGN);
        offsets.push(cursor);
        cursor += p.bytes.len();
    }
    let total_len = cursor;

    let mut out = Vec::with_capacity(total_len);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(payloads.len() as u32).to_le_bytes());
    out.extend_from_slice(&(total_len as u64).to_le_bytes());
    out.extend_from_slice(&(manifest_offset as u64).to_le_bytes());
    out.extend_from_slice(&(manifest_json.len() as u64).to_le_bytes());
    for (p, offset) in payloads.iter().zip(&offsets) {
        out.extend_from_slice(&p.kind.code().to_le_bytes());
        out.extend_from_slice(&p.sm.to_le_bytes());
        out.extend_from_slice(&(*offset as u64).to_le_bytes());
        out.extend_from_slice(&(p.bytes.len() as u64).to_le_bytes());
    }
    out.extend_from_slice(&manifest_json);
    for (p, offset) in payloads.iter().zip(&offsets) {
        out.resize(*offset, 0);
        out.extend_from_slice(p.bytes);
    }
    out
}

fn u32_at(data: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&data[at..at + 4]);
    u32::from_le_bytes(b)
}

fn u64_at(data: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&data[at..at + 8]);
    u64::from_le_bytes(b)
}

/// `offset..offset+len` as a checked range inside `0..total`.
fn range(offset: u64, len: u64, total: usize, what: &str) -> Result<std::ops::Range<usize>, BundleError> {
    let end = offset.checked_add(len).filter(|end| *end <= total as u64).ok_or_else(|| {
        BundleError::Corrupt(format!("{what} at {offset}..{offset}+{len} lies outside the {total}-byte bundle"))
    })?;
    Ok(offset as usize..end as usize)
}

impl<'a> Bundle<'a> {
    /// Parses a bundle; trailing bytes after `total_len` are ignored.
    pub fn parse(data: &'a [u8]) -> Result<Bundle<'a>, BundleError> {
        if data.len() < HEADER_LEN {
            if data.len() >= 8 && data[..8] != MAGIC {
                return Err(BundleError::BadMagic);
            }
            return Err(BundleError::Truncated { needed: HEADER_LEN as u64, available: data.len() as u64 });
        }
        if data[..8] != MAGIC {
            return Err(BundleError::BadMagic);
        }
        let version = u32_at(data, 8);
        if version != VERSION {
            return Err(BundleError::UnsupportedVersion(version));
        }
        let count = u32_at(data, 12) as u64;
        let total_len = u64_at(data, 16);
        if total_len > data.len() as u64 {
            return Err(BundleError::Truncated { needed: total_len, available: data.len() as u64 });
        }
        let table_end = HEADER_LEN as u64 + ENTRY_LEN as u64 * count;
        if total_len < table_end {
            return Err(BundleError::Corrupt(format!(
                "total_len {total_len} is smaller than the header and table of {count} payloads ({table_end} bytes)"
            )));
        }
        let data = &data[..total_len as usize];
        let manifest_range = range(u64_at(data, 24), u64_at(data, 32), data.len(), "manifest")?;
        if (manifest_range.start as u64) < table_end {
            return Err(BundleError::Corrupt("manifest overlaps the header or payload table".into()));
        }
        let manifest: Manifest =
            serde_json::from_slice(&data[manifest_range]).map_err(|e| BundleError::Manifest(e.to_string()))?;

        let mut payloads = Vec::with_capacity(count as usize);
        for i in 0..count as usize {
            let at = HEADER_LEN + ENTRY_LEN * i;
            let kind_code = u32_at(data, at);
            let kind = PayloadKind::from_code(kind_code).ok_or(BundleError::UnknownPayloadKind(kind_code))?;
            let sm = u32_at(data, at + 4);
            let r = range(u64_at(data, at + 8), u64_at(data, at + 16), data.len(), &format!("payload {i}"))?;
            payloads.push(Payload { kind, sm, bytes: &data[r] });
        }
        Ok(Bundle { version, manifest, payloads })
    }

    /// Chooses the payload to load on a device of compute capability `device_sm` (see [`select`]).
    pub fn select_payload(&self, device_sm: (u32, u32)) -> Result<Payload<'a>, NoPayload> {
        select(self.payloads.iter().map(|p| (p.kind, p.sm)), device_sm).map(|i| self.payloads[i])
    }
}

impl Bundle<'static> {
    /// Parses the bundle at a linked-in symbol, reading its length from the header.
    ///
    /// # Safety
    /// `ptr` must point to readable memory that lives for the rest of the program and holds at
    /// least [`HEADER_LEN`] bytes and, when those start with [`MAGIC`], `total_len` bytes (the
    /// bundle symbol that `oxide-rustc` emits satisfies this).
    pub unsafe fn from_symbol(ptr: *const u8) -> Result<Bundle<'static>, BundleError> {
        if ptr.is_null() {
            return Err(BundleError::Corrupt("bundle symbol address is null".into()));
        }
        // SAFETY: the caller guarantees at least HEADER_LEN readable bytes.
        let header = unsafe { std::slice::from_raw_parts(ptr, HEADER_LEN) };
        if header[..8] != MAGIC {
            return Err(BundleError::BadMagic);
        }
        let total_len = u64_at(header, 16);
        if total_len < HEADER_LEN as u64 || total_len > MAX_BUNDLE_LEN {
            return Err(BundleError::Corrupt(format!("implausible total_len {total_len}")));
        }
        // SAFETY: the caller guarantees total_len readable bytes living forever.
        let data: &'static [u8] = unsafe { std::slice::from_raw_parts(ptr, total_len as usize) };
        Bundle::parse(data)
    }
}

/// Every bundle in the bytes of the linked section [`crate::naming::BUNDLE_SECTION`]: bundles one
/// after another, each starting at a multiple of [`PAYLOAD_ALIGN`] from the section's start, with
/// zero bytes in between (alignment padding, and the marker the runtime puts there so that the
/// section exists in every binary).
pub fn parse_section(section: &[u8]) -> Result<Vec<Bundle<'_>>, BundleError> {
    split_section(section)?.into_iter().map(Bundle::parse).collect()
}

/// The bytes of each bundle in a bundle section (see [`parse_section`]), unparsed.
pub fn split_section(section: &[u8]) -> Result<Vec<&[u8]>, BundleError> {
    let mut bundles = Vec::new();
    let mut at = 0;
    while at < section.len() {
        let rest = &section[at..];
        if rest[0] == 0 {
            // Padding: skip to the next aligned position.
            at += PAYLOAD_ALIGN.min(rest.len());
            continue;
        }
        if rest.len() < HEADER_LEN || rest[..8] != MAGIC {
            return Err(BundleError::Corrupt(format!("bytes at offset {at} of the bundle section are not a bundle")));
        }
        let total_len = u64_at(rest, 16) as usize;
        if total_len > rest.len() {
            return Err(BundleError::Truncated { needed: total_len as u64, available: rest.len() as u64 });
        }
        bundles.push(&rest[..total_len]);
        at += total_len.next_multiple_of(PAYLOAD_ALIGN).max(PAYLOAD_ALIGN);
    }
    Ok(bundles)
}

/// No payload of a bundle can run on the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoPayload {
    /// The device's compute capability.
    pub device_sm: (u32, u32),
    /// `(kind, arch)` of every payload there was, e.g. `(Cubin, "sm_90")`.
    pub available: Vec<(PayloadKind, String)>,
}

impl fmt::Display for NoPayload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor) = self.device_sm;
        write!(f, "no device code for this GPU (compute capability {major}.{minor}, sm_{major}{minor}): ")?;
        if self.available.is_empty() {
            write!(f, "the build contains no payloads")?;
        } else {
            let list: Vec<String> = self.available.iter().map(|(k, a)| format!("{k} {a}")).collect();
            write!(f, "the build contains {}", list.join(", "))?;
            if self.available.iter().all(|(k, _)| *k == PayloadKind::Ltoir) {
                write!(f, " (LTOIR must be linked at build time)")?;
            }
        }
        write!(f, "; rebuild with `cargo oxide build --arch sm_{major}{minor}`")
    }
}

impl std::error::Error for NoPayload {}

/// Picks, among payloads given as `(kind, Arch::code)`, the one to load on a device of compute
/// capability `device_sm`, returning its index. In order of preference:
/// 1. a cubin for exactly this SM (an arch-specific one first);
/// 2. a fatbin whose lowest arch the device can run (the driver picks inside it);
/// 3. a cubin of the same major version and a lower minor (binary compatible), highest first;
/// 4. the highest PTX the device can JIT (arch-specific PTX only on exactly its SM).
///
/// LTOIR is never chosen: it needs nvJitLink.
pub fn select(
    candidates: impl IntoIterator<Item = (PayloadKind, u32)>,
    device_sm: (u32, u32),
) -> Result<usize, NoPayload> {
    let candidates: Vec<(PayloadKind, u32)> = candidates.into_iter().collect();
    let device = device_sm.0 * 10 + device_sm.1;
    let sm = |code: u32| code & !ARCH_SPECIFIC_FLAG;
    let specific = |code: u32| code & ARCH_SPECIFIC_FLAG != 0;
    let runs = |code: u32| if specific(code) { sm(code) == device } else { sm(code) <= device };
    // Best index of `kind` among those `ok`, ranked by `key` (highest wins, first on ties).
    let best = |kind: PayloadKind, ok: &dyn Fn(u32) -> bool, key: &dyn Fn(u32) -> (u32, bool)| {
        let mut found: Option<(usize, (u32, bool))> = None;
        for (i, (k, code)) in candidates.iter().enumerate() {
            if *k == kind && ok(*code) && found.is_none_or(|(_, best)| key(*code) > best) {
                found = Some((i, key(*code)));
            }
        }
        found.map(|(i, _)| i)
    };
    let rank = |code: u32| (sm(code), specific(code));
    best(PayloadKind::Cubin, &|c| sm(c) == device, &rank)
        .or_else(|| best(PayloadKind::Fatbin, &runs, &rank))
        .or_else(|| best(PayloadKind::Cubin, &|c| !specific(c) && sm(c) / 10 == device_sm.0 && sm(c) <= device, &rank))
        .or_else(|| best(PayloadKind::Ptx, &runs, &rank))
        .ok_or_else(|| NoPayload {
            device_sm,
            available: candidates.iter().map(|(k, c)| (*k, arch_name(*c))).collect(),
        })
}

#[cfg(test)]
#[path = "bundle_tests.rs"]
mod tests;
