//! The device artifact folders of a profile (`<target>/oxide/<profile>/device/<crate>/`) made to
//! match what the built binaries embed.
//!
//! `oxide-rustc` writes a crate's files when it compiles the crate. Cargo does not recompile a
//! crate whose files were deleted or overwritten, so after every build the bundles embedded in
//! the built executables and libraries are read back, and each payload file and manifest that is
//! missing or differs is written again from them. What `inspect` shows and what sideloading
//! loads is then exactly what the binary runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use object::read::archive::ArchiveFile;
use object::{Object, ObjectSection};
use oxide_contract::bundle::{Bundle, parse_section};
use oxide_contract::manifest::Manifest;
use oxide_contract::naming::{self, files};

use crate::cache::Stamps;

/// The bundles in one object file's bundle section.
fn bundles_in_object(data: &[u8]) -> Vec<Bundle<'_>> {
    let Ok(file) = object::File::parse(data) else { return Vec::new() };
    let Some(section) = file.section_by_name(naming::BUNDLE_SECTION) else { return Vec::new() };
    let Ok(bytes) = section.data() else { return Vec::new() };
    parse_section(bytes).unwrap_or_default()
}

/// The bundles in the bytes of an executable, a shared library or an rlib (an archive of objects).
fn bundles_in(bytes: &[u8]) -> Vec<Bundle<'_>> {
    let Ok(archive) = ArchiveFile::parse(bytes) else { return bundles_in_object(bytes) };
    archive.members().flatten().filter_map(|m| m.data(bytes).ok()).flat_map(bundles_in_object).collect()
}

/// Writes `bytes` to `path` unless it already holds exactly them; `true` when it wrote.
fn ensure_file(path: &Path, bytes: &[u8]) -> Result<bool> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    std::fs::write(path, bytes).with_context(|| format!("could not write {}", path.display()))?;
    Ok(true)
}

/// What the last [`sync_if_changed`] saw: the built files it read, the artifact files it left,
/// each with its stamp, and the manifests it found.
#[derive(serde::Serialize, serde::Deserialize)]
struct Synced {
    built: Stamps,
    written: Stamps,
    manifests: BTreeMap<String, Manifest>,
}

/// [`sync`], skipped when neither the built files nor the artifact files changed since the last
/// sync (reading every bundle back means reading whole executables, tens of MB for a debug build).
pub fn sync_if_changed(built_files: &[PathBuf], device_dir: &Path) -> Result<BTreeMap<String, Manifest>> {
    let stamp_path = device_dir.join(".synced.json");
    if let Some(last) = crate::cache::read::<Synced>(&stamp_path)
        && last.built.paths().eq(built_files.iter().map(PathBuf::as_path))
        && last.built.current()
        && last.written.current()
    {
        return Ok(last.manifests);
    }
    let (manifests, _) = sync(built_files, device_dir)?;
    let mut written = Vec::new();
    for (dir_name, manifest) in &manifests {
        let dir = naming::crate_artifact_dir(device_dir, dir_name);
        written.extend(manifest.payloads.iter().map(|p| dir.join(&p.file)));
        written.push(dir.join(files::MANIFEST));
    }
    let synced = Synced {
        built: Stamps::of(built_files.iter().map(PathBuf::as_path)),
        written: Stamps::of(written.iter().map(PathBuf::as_path)),
        manifests,
    };
    crate::cache::write(&stamp_path, &synced);
    Ok(synced.manifests)
}

/// Makes the artifact folders in `device_dir` match the bundles embedded in `built_files`;
/// returns the manifest of each bundle found (one per crate folder), and how many files were
/// written again.
pub fn sync(built_files: &[PathBuf], device_dir: &Path) -> Result<(BTreeMap<String, Manifest>, usize)> {
    let mut manifests = BTreeMap::new();
    let mut rewritten = 0;
    for path in built_files {
        let Ok(bytes) = std::fs::read(path) else { continue };
        for bundle in bundles_in(&bytes) {
            let manifest = bundle.manifest;
            let dir_name = if manifest.dir.is_empty() { manifest.crate_name.clone() } else { manifest.dir.clone() };
            if manifests.contains_key(&dir_name) {
                continue;
            }
            let dir = naming::crate_artifact_dir(device_dir, &dir_name);
            std::fs::create_dir_all(&dir).with_context(|| format!("could not create {}", dir.display()))?;
            for (info, payload) in manifest.payloads.iter().zip(&bundle.payloads) {
                rewritten += usize::from(ensure_file(&dir.join(&info.file), payload.bytes)?);
            }
            let json = manifest.to_json_pretty();
            let on_disk =
                std::fs::read_to_string(dir.join(files::MANIFEST)).ok().and_then(|t| Manifest::from_json(&t).ok());
            if on_disk.as_ref() != Some(&manifest) {
                rewritten += usize::from(ensure_file(&dir.join(files::MANIFEST), json.as_bytes())?);
            }
            manifests.insert(dir_name, manifest);
        }
    }
    Ok((manifests, rewritten))
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxide_contract::bundle::{Payload, write_bundle};
    use oxide_contract::manifest::{PayloadInfo, PayloadKind};

    fn bundle_bytes() -> Vec<u8> {
        let ptx = b".version 7.8\n.target sm_90\n";
        let mut m = Manifest::new("app");
        m.dir = "app.bin".into();
        m.payloads.push(PayloadInfo {
            arch: "sm_90".into(),
            kind: PayloadKind::Ptx,
            file: "app.sm_90.ptx".into(),
            sha256: oxide_contract::sha256_hex(ptx),
            bytes: ptx.len() as u64,
            cuda_release: None,
        });
        write_bundle(&m, &[Payload { kind: PayloadKind::Ptx, sm: 90, bytes: ptx }])
    }

    /// An ELF object with the bundle in the bundle section, as the linker leaves it.
    fn object_with_bundle() -> Vec<u8> {
        use object::write::Object as Writer;
        let mut obj = Writer::new(object::BinaryFormat::Elf, object::Architecture::X86_64, object::Endianness::Little);
        let section =
            obj.add_section(Vec::new(), naming::BUNDLE_SECTION.as_bytes().to_vec(), object::SectionKind::ReadOnlyData);
        obj.append_section_data(section, &bundle_bytes(), 16);
        obj.write().unwrap()
    }

    #[test]
    fn missing_and_changed_files_are_written_again() {
        let tmp = tempfile::tempdir().unwrap();
        let exe = tmp.path().join("app");
        std::fs::write(&exe, object_with_bundle()).unwrap();
        let device = tmp.path().join("device");
        let (manifests, written) = sync(std::slice::from_ref(&exe), &device).unwrap();
        assert_eq!(manifests.keys().collect::<Vec<_>>(), ["app.bin"]);
        assert_eq!(written, 2, "the PTX and the manifest");
        let ptx = device.join("app.bin/app.sm_90.ptx");
        assert_eq!(std::fs::read(&ptx).unwrap(), b".version 7.8\n.target sm_90\n");
        // Nothing to do the second time; a deleted or edited file comes back.
        assert_eq!(sync(std::slice::from_ref(&exe), &device).unwrap().1, 0);
        std::fs::remove_file(&ptx).unwrap();
        std::fs::write(device.join("app.bin/manifest.json"), "{}").unwrap();
        assert_eq!(sync(&[exe], &device).unwrap().1, 2);
        assert!(ptx.is_file());
    }

    #[test]
    fn sync_if_changed_skips_only_while_nothing_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let exe = tmp.path().join("app");
        std::fs::write(&exe, object_with_bundle()).unwrap();
        let device = tmp.path().join("device");
        let files = [exe.clone()];
        assert_eq!(sync_if_changed(&files, &device).unwrap().keys().collect::<Vec<_>>(), ["app.bin"]);
        // An unreadable executable with the old stamp would still give the remembered manifests.
        assert_eq!(sync_if_changed(&files, &device).unwrap().len(), 1);
        // A deleted artifact file is noticed and written again.
        let ptx = device.join("app.bin/app.sm_90.ptx");
        std::fs::remove_file(&ptx).unwrap();
        sync_if_changed(&files, &device).unwrap();
        assert!(ptx.is_file());
        // A rebuilt executable without a bundle leaves no manifests.
        std::fs::write(&exe, b"not an object file, and longer than before").unwrap();
        assert!(sync_if_changed(&files, &device).unwrap().is_empty());
    }
}
