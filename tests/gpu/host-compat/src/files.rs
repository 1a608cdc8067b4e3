//! Device code from files and from the executable: `load_module_from_file` with PTX, cubin and
//! fatbin files written from this binary's own bundle, the compile-time manifest-dir path, the
//! fallback to embedded code, missing and broken files; `embedded`, `ltoir::load_kernel_module`,
//! and `load_kernel_module`'s fallback when the artifact directory has nothing.
use std::path::PathBuf;

use cuda_core::oxide_contract::bundle::Bundle;
use cuda_core::oxide_contract::manifest::PayloadKind;
use cuda_core::{Module, sys};

use crate::harness::{Lcg, Report, ck};
use crate::{CRATE, Env, PACKAGE, check_vecadd};

const N: usize = 100_003;

/// A fresh directory for the files these checks write.
fn scratch_dir() -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("gpu-host-compat-{}", std::process::id()));
    ck(std::fs::create_dir_all(&dir), "create the scratch directory")?;
    Ok(dir)
}

/// This binary's embedded bundle, as the bytes of its payloads.
fn own_bundle() -> Result<cuda_core::embedded::OwnedArtifactBundle, String> {
    let bundles = ck(cuda_core::embedded::artifact_bundles_from_current_exe(), "artifact_bundles_from_current_exe")?;
    let names: Vec<&str> = bundles.iter().map(|b| b.name.as_str()).collect();
    let own = bundles.iter().find(|b| b.manifest.crate_name == CRATE).cloned();
    let own = own.ok_or_else(|| format!("no bundle of crate `{CRATE}` among {names:?}"))?;
    // As NVIDIA's cuda-oxide names bundles: by the Cargo package (`-`), not the crate (`_`).
    if own.name != PACKAGE {
        return Err(format!("the bundle of crate `{CRATE}` is named `{}`, not its package `{PACKAGE}`", own.name));
    }
    Ok(own)
}

pub fn checks(report: &mut Report, rng: &mut Lcg, env: &Env) {
    report.check("embedded_bundles", || {
        let bundle = own_bundle()?;
        let entries = bundle.manifest.entries();
        for k in ["vecadd", "iota_at", "to_kelvin"] {
            if !entries.iter().any(|e| e == k) {
                return Err(format!("the embedded manifest lacks `{k}`: {entries:?}"));
            }
        }
        if bundle.payload(PayloadKind::Ptx).is_none() || bundle.payload(PayloadKind::Cubin).is_none() {
            return Err("the embedded bundle lacks PTX or a cubin".into());
        }
        // By package name too (a `-` for the crate name's `_`).
        let loaded =
            ck(cuda_host::embedded::load_embedded_module(&env.ctx, "gpu-host-compat"), "load_embedded_module")?;
        check_vecadd(env, rng, &loaded, N, "embedded module by package name")
    });

    report.check("ptx_file", || {
        let bundle = own_bundle()?;
        let path = scratch_dir()?.join(format!("{CRATE}.ptx"));
        ck(std::fs::write(&path, bundle.payload(PayloadKind::Ptx).unwrap_or_default()), "write the PTX file")?;
        let module = ck(env.ctx.load_module_from_file(&path.to_string_lossy()), "load_module_from_file(.ptx)")?;
        check_vecadd(env, rng, &module, N, "PTX file")
    });

    report.check("cubin_and_fatbin_files", || {
        let bundle = own_bundle()?;
        let parsed = ck(Bundle::parse(bundle.bytes()), "parse the bundle")?;
        let (major, minor) = env.ctx.capability();
        let dir = scratch_dir()?;
        // The cubin for exactly this GPU, if the build has one.
        if let Some(cubin) = parsed.payloads.iter().find(|p| p.kind == PayloadKind::Cubin && p.sm == major * 10 + minor)
        {
            let path = dir.join("exact.cubin");
            ck(std::fs::write(&path, cubin.bytes), "write the cubin")?;
            let module = ck(env.ctx.load_module_from_file(&path.to_string_lossy()), "load_module_from_file(.cubin)")?;
            check_vecadd(env, rng, &module, N, "cubin file")?;
        }
        // The fatbin (builds for more than one arch have one) under a name that says nothing.
        if let Some(fatbin) = bundle.payload(PayloadKind::Fatbin) {
            let path = dir.join("device-code.bin");
            ck(std::fs::write(&path, fatbin), "write the fatbin")?;
            let module = ck(Module::from_file(&env.ctx, &path), "Module::from_file(fatbin)")?;
            check_vecadd(env, rng, &module, N, "fatbin file")?;
        }
        Ok(())
    });

    report.check("manifest_dir_path_and_embedded_fallback", || {
        // NVIDIA's examples spell the build machine's absolute path; on another machine the file
        // is not there and the embedded device code of the crate named like the file is loaded.
        let compiled_in = concat!(env!("CARGO_MANIFEST_DIR"), "/gpu_host_compat.ptx");
        let module = ck(env.ctx.load_module_from_file(compiled_in), "load_module_from_file(CARGO_MANIFEST_DIR/..)")?;
        check_vecadd(env, rng, &module, N, "manifest-dir path")?;
        // No file of this name exists anywhere: only the embedded code can answer.
        let module = ck(env.ctx.load_module_from_file("/nonexistent/gpu_host_compat.nowhere"), "embedded fallback")?;
        check_vecadd(env, rng, &module, 257, "embedded fallback")
    });

    report.check("missing_and_broken_files", || {
        let e = match env.ctx.load_module_from_file("no_such_module_for_host_compat.ptx") {
            Ok(_) => return Err("a missing file loaded".into()),
            Err(e) => e,
        };
        if e.0 != sys::cudaError_enum_CUDA_ERROR_FILE_NOT_FOUND || e.name() != "CUDA_ERROR_FILE_NOT_FOUND" {
            return Err(format!("missing file: expected CUDA_ERROR_FILE_NOT_FOUND, got {e}"));
        }
        let text = e.to_string();
        if !text.contains("no_such_module_for_host_compat.ptx") || !text.contains("cargo oxide build") {
            return Err(format!("the error does not say what is missing and what to do: {text}"));
        }
        let dir = scratch_dir()?;
        let junk = dir.join("junk.ptx");
        ck(std::fs::write(&junk, [0x00u8, 0x9f, 0x92, 0x96, 0x00, 0x01]), "write junk")?;
        match env.ctx.load_module_from_file(&junk.to_string_lossy()) {
            Err(e) if e.0 == sys::cudaError_enum_CUDA_ERROR_INVALID_IMAGE => {}
            other => return Err(format!("junk: expected CUDA_ERROR_INVALID_IMAGE, got {:?}", other.map(|_| ()))),
        }
        let bad_ptx = dir.join("bad.ptx");
        ck(std::fs::write(&bad_ptx, ".version 7.0\n.target sm_80\nthis is not ptx\n"), "write bad PTX")?;
        match env.ctx.load_module_from_file(&bad_ptx.to_string_lossy()) {
            Ok(_) => Err("bad PTX loaded".into()),
            // The JIT's error, whatever code the driver uses; `err.0` and `code()` agree.
            Err(e) if e.code() == Some(e.0 as u32) && e.name().starts_with("CUDA_ERROR_") => Ok(()),
            Err(e) => Err(format!("bad PTX: expected a driver error, got {e}")),
        }
    });

    report.check("ltoir_load_kernel_module", || {
        let module = ck(cuda_host::ltoir::load_kernel_module(&env.ctx, CRATE), "ltoir::load_kernel_module")?;
        check_vecadd(env, rng, &module, N, "ltoir::load_kernel_module")?;
        match cuda_host::ltoir::load_kernel_module(&env.ctx, "no_such_module_for_host_compat") {
            Err(cuda_host::ltoir::LtoirError::NoArtifact { searched, .. }) if !searched.is_empty() => Ok(()),
            other => Err(format!("unknown module: expected NoArtifact, got {:?}", other.map(|_| ()))),
        }
    });

    report.check("load_kernel_module_without_artifacts", || {
        // An artifact directory without this crate: the seed's loader falls back to the
        // `<crate>.ptx` file or the embedded code, as a binary copied elsewhere must.
        let empty = scratch_dir()?.join("no-artifacts");
        ck(std::fs::create_dir_all(&empty), "create an empty artifact dir")?;
        let before = std::env::var_os(cuda_host::ARTIFACT_DIR_ENV);
        // SAFETY (set_var): no other thread of this program reads the environment meanwhile.
        unsafe { std::env::set_var(cuda_host::ARTIFACT_DIR_ENV, &empty) };
        let loaded = cuda_host::load_kernel_module(&env.ctx, CRATE);
        match before {
            Some(v) => unsafe { std::env::set_var(cuda_host::ARTIFACT_DIR_ENV, v) },
            None => unsafe { std::env::remove_var(cuda_host::ARTIFACT_DIR_ENV) },
        }
        let loaded = ck(loaded, "load_kernel_module with an empty artifact dir")?;
        check_vecadd(env, rng, &loaded, N, "load_kernel_module fallback")
    });
}
