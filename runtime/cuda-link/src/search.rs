//! Which nvJitLink links a program's LTOIR: the places looked in, and the choice of the first
//! library whose CUDA release can link LTOIR of the release that made it
//! (`oxide_contract::link::nvjitlink_can_link`). A machine often has several (the driver's
//! packages, a CUDA toolkit, the tools `cargo oxide setup` installed), and the first on the
//! loader's path may be older than the libNVVM that made the LTOIR.

use std::fmt;
use std::path::{Path, PathBuf};

use oxide_contract::link::nvjitlink_can_link;
use oxide_contract::toolkit::{CudaRelease, managed_cuda_root};

use crate::nvjitlink::NVJITLINK_ENV;

/// The library's file name (its soname: one per CUDA major release).
pub const LIBRARY: &str = "libnvJitLink.so.13";

/// One place to look for nvJitLink.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// A path, or a bare file name that the dynamic loader searches for.
    pub path: PathBuf,
    /// Why it is looked at: `CUDA_OXIDE_NVJITLINK`, `CUDA_HOME`, …
    pub source: &'static str,
}

/// The places, in the order they are tried: [`NVJITLINK_ENV`], the CUDA tools `cargo oxide setup`
/// installed, `CUDA_HOME`, `CUDA_PATH`, the dynamic loader's search path, `/usr/local/cuda`.
pub fn places() -> Vec<Place> {
    let mut places = Vec::new();
    if let Some(path) = std::env::var_os(NVJITLINK_ENV).filter(|p| !p.is_empty()) {
        places.push(Place { path: path.into(), source: NVJITLINK_ENV });
    }
    let managed = managed_cuda_root();
    places.push(Place { path: managed.join("lib").join(LIBRARY), source: "the CUDA tools of `cargo oxide setup`" });
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var).filter(|d| !d.is_empty()) {
            // A toolkit keeps it in lib64/, NVIDIA's wheels in lib/.
            for dir in ["lib64", "lib"] {
                places.push(Place { path: Path::new(&root).join(dir).join(LIBRARY), source: var });
            }
        }
    }
    places.push(Place { path: LIBRARY.into(), source: "the dynamic loader's search path" });
    places.push(Place { path: Path::new("/usr/local/cuda/lib64").join(LIBRARY), source: "/usr/local/cuda" });
    places
}

/// What was at a place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe<L> {
    /// Nothing there.
    Missing,
    /// A file that would not open as nvJitLink (the loader's message).
    Unusable(String),
    /// A library, where it really is (a bare name resolved by the loader) and its release.
    Found { lib: L, path: PathBuf, release: CudaRelease },
}

/// One library seen during a search, for the error when none fits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub place: Place,
    pub path: PathBuf,
    /// `None`: present but unusable (`problem` says why).
    pub release: Option<CudaRelease>,
    pub problem: Option<String>,
}

/// No nvJitLink fits: what was needed, every library seen, and the places with none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoneFits {
    pub need: Option<CudaRelease>,
    pub seen: Vec<Seen>,
    pub empty: Vec<Place>,
}

/// Tries `places` in order with `probe` and returns the first library that can link LTOIR made
/// by CUDA `need` (with `need` unknown, the first that opens), with its path and release.
/// A library reached twice (a symlink, or the loader's pick that is also a named place) is
/// looked at once.
pub fn choose<L>(
    places: &[Place],
    need: Option<CudaRelease>,
    mut probe: impl FnMut(&Place) -> Probe<L>,
) -> Result<(L, PathBuf, CudaRelease), NoneFits> {
    let mut none = NoneFits { need, seen: Vec::new(), empty: Vec::new() };
    for place in places {
        match probe(place) {
            Probe::Missing => none.empty.push(place.clone()),
            Probe::Unusable(problem) => none.seen.push(Seen {
                place: place.clone(),
                path: place.path.clone(),
                release: None,
                problem: Some(problem),
            }),
            Probe::Found { lib, path, release } => {
                if none.seen.iter().any(|s| s.path == path) {
                    continue;
                }
                if need.is_none_or(|need| nvjitlink_can_link(release, need)) {
                    return Ok((lib, path, release));
                }
                none.seen.push(Seen { place: place.clone(), path, release: Some(release), problem: None });
            }
        }
    }
    Err(none)
}

impl fmt::Display for NoneFits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.need {
            Some(need) => write!(
                f,
                "no nvJitLink on this machine can link this LTOIR: it was made by CUDA {need}, \
                 which needs nvJitLink {need} or a newer {}.x",
                need.major
            )?,
            None => write!(f, "no nvJitLink could be opened")?,
        }
        for seen in &self.seen {
            let at = seen.path.display();
            let source = seen.place.source;
            match (seen.release, &seen.problem) {
                (Some(release), _) => write!(f, "\n  nvJitLink {release} at {at} ({source}): too old")?,
                (None, Some(problem)) => write!(f, "\n  {at} ({source}): unusable: {problem}")?,
                (None, None) => write!(f, "\n  {at} ({source})")?,
            }
        }
        if !self.empty.is_empty() {
            let places: Vec<String> = self.empty.iter().map(|p| p.path.display().to_string()).collect();
            write!(f, "\n  none at {}", places.join(", "))?;
        }
        let version = self.need.map_or_else(|| "13".to_string(), |n| format!("{n} or newer"));
        write!(
            f,
            "\nInstall CUDA {version} (or run `cargo oxide setup`, whose CUDA tools have one), or set \
             {NVJITLINK_ENV} to the path of a {LIBRARY} of CUDA {version}"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(path: &str, source: &'static str) -> Place {
        Place { path: path.into(), source }
    }

    /// A library on a made-up machine: its path, and its release or why it does not open.
    type Lib<'a> = (&'a str, Result<(u32, u32), &'a str>);

    /// A machine with the given libraries.
    fn machine<'a>(libs: &'a [Lib<'a>]) -> impl FnMut(&Place) -> Probe<String> + 'a {
        move |p: &Place| match libs.iter().find(|(path, _)| Path::new(path) == p.path) {
            None => Probe::Missing,
            Some((_, Err(e))) => Probe::Unusable(e.to_string()),
            Some((path, Ok((major, minor)))) => {
                Probe::Found { lib: path.to_string(), path: path.into(), release: CudaRelease::new(*major, *minor) }
            }
        }
    }

    const V13_5: Option<CudaRelease> = Some(CudaRelease::new(13, 5));

    fn h200_places() -> Vec<Place> {
        vec![
            place("/root/.cuda-oxide/cuda-13.5.37/nvidia/cu13/lib/libnvJitLink.so.13", "setup"),
            place("/opt/cuda/lib64/libnvJitLink.so.13", "CUDA_HOME"),
            place("/usr/lib/x86_64-linux-gnu/libnvJitLink.so.13", "loader"),
            place("/usr/local/cuda/lib64/libnvJitLink.so.13", "/usr/local/cuda"),
        ]
    }

    #[test]
    fn an_older_library_first_in_line_is_skipped() {
        let libs = [
            ("/usr/lib/x86_64-linux-gnu/libnvJitLink.so.13", Ok((13, 0))),
            ("/usr/local/cuda/lib64/libnvJitLink.so.13", Ok((13, 6))),
        ];
        let (lib, _, release) = choose(&h200_places(), V13_5, machine(&libs)).unwrap();
        assert_eq!(lib, "/usr/local/cuda/lib64/libnvJitLink.so.13");
        assert_eq!(release, CudaRelease::new(13, 6));
    }

    #[test]
    fn the_first_that_fits_wins_in_place_order() {
        let libs =
            [("/tmp/lib/libnvJitLink.so.13", Ok((13, 5))), ("/usr/local/cuda/lib64/libnvJitLink.so.13", Ok((13, 7)))];
        let mut places = h200_places();
        places.insert(0, place("/tmp/lib/libnvJitLink.so.13", NVJITLINK_ENV));
        let (lib, ..) = choose(&places, V13_5, machine(&libs)).unwrap();
        assert_eq!(lib, "/tmp/lib/libnvJitLink.so.13");
        // Without a recorded release (an older bundle), the first that opens.
        let libs = [("/usr/lib/x86_64-linux-gnu/libnvJitLink.so.13", Ok((13, 0)))];
        assert_eq!(choose(&h200_places(), None, machine(&libs)).unwrap().2, CudaRelease::new(13, 0));
    }

    #[test]
    fn another_major_release_does_not_fit() {
        let libs = [("/opt/cuda/lib64/libnvJitLink.so.13", Ok((14, 0)))];
        assert!(choose(&h200_places(), V13_5, machine(&libs)).is_err());
    }

    #[test]
    fn none_fits_names_the_need_each_library_and_the_fixes() {
        let libs = [
            ("/opt/cuda/lib64/libnvJitLink.so.13", Err("invalid ELF header")),
            ("/usr/lib/x86_64-linux-gnu/libnvJitLink.so.13", Ok((13, 0))),
        ];
        let err = choose(&h200_places(), V13_5, machine(&libs)).unwrap_err();
        assert_eq!(err.seen.len(), 2);
        assert_eq!(err.empty.len(), 2);
        let text = err.to_string();
        for needle in [
            "made by CUDA 13.5, which needs nvJitLink 13.5 or a newer 13.x",
            "nvJitLink 13.0 at /usr/lib/x86_64-linux-gnu/libnvJitLink.so.13 (loader): too old",
            "/opt/cuda/lib64/libnvJitLink.so.13 (CUDA_HOME): unusable: invalid ELF header",
            "none at /root/.cuda-oxide/cuda-13.5.37/nvidia/cu13/lib/libnvJitLink.so.13, /usr/local/cuda/lib64/",
            "Install CUDA 13.5 or newer",
            "set CUDA_OXIDE_NVJITLINK to the path of a libnvJitLink.so.13 of CUDA 13.5 or newer",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
        }
    }

    #[test]
    fn a_library_reached_twice_is_listed_once() {
        // The loader's pick (a bare name) is the same file as CUDA_HOME's.
        let mut places = h200_places();
        places[2] = place(LIBRARY, "loader");
        let same_old = |p: &Place| match p.source {
            "CUDA_HOME" | "loader" => Probe::Found {
                lib: (),
                path: "/opt/cuda/lib64/libnvJitLink.so.13".into(),
                release: CudaRelease::new(13, 0),
            },
            _ => Probe::Missing,
        };
        let err = choose(&places, V13_5, same_old).unwrap_err();
        assert_eq!(err.seen.len(), 1, "{err}");
        assert_eq!(err.seen[0].place.source, "CUDA_HOME");
    }

    #[test]
    fn places_start_with_the_override_then_the_managed_tools() {
        // Read-only: the order of the places that do not depend on the environment.
        let places = places();
        let managed = places.iter().position(|p| p.source.contains("cargo oxide setup")).unwrap();
        let loader = places.iter().position(|p| p.path == Path::new(LIBRARY)).unwrap();
        let usr_local = places.iter().position(|p| p.source == "/usr/local/cuda").unwrap();
        assert!(managed < loader && loader < usr_local);
        assert!(places[managed].path.ends_with("nvidia/cu13/lib/libnvJitLink.so.13"));
        assert!(places.iter().take_while(|p| p.source == NVJITLINK_ENV).count() <= 1);
    }
}
