//! Host items renamed or replaced recently keep a deprecated alias for one release, whose note
//! names the new form: with `deny(deprecated)` each old use is one error carrying that note
//! (CHANGELOG.md lists every change).
#![deny(deprecated)]

// The crate `oxide-format` became `oxide-contract`. Naming the module warns; a path through it
// still compiles, silently (rustc checks deprecation on the last segment of a path only).
use cuda_core::oxide_format;
use cuda_core::oxide_format::manifest::Manifest;

fn main() {
    let _ = oxide_format::naming::profile_dir("dev");
    let _ = Manifest::new("app");
    // Loading one bundle by its symbol became finding kernels in every bundle of the binary.
    let _ = cuda_core::load_embedded;
    let _ = cuda_host::load_embedded;
}
