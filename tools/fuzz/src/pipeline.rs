//! `oxide-fuzz run`: generates programs in batches, builds each batch crate through `cargo oxide
//! build` in every profile (a build that fails is narrowed down to the programs that make it fail,
//! which are set aside, and the rest is built again), checks the PTX with `ptxas`, runs the CPU
//! side (and the GPU side, where there is a GPU), compares the profiles' CPU checksums, and
//! records every failure.
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use crate::crate_writer;
use crate::failure::{Failure, Kind, Profile, error_excerpt};
use crate::generator::{Features, Program, generate};
use crate::tools::Tools;

pub struct RunOpts {
    pub seed: u64,
    pub count: u64,
    /// Programs per crate (and binary).
    pub per_crate: usize,
    pub profiles: Vec<Profile>,
    /// Generated crates, binaries, reference checksums and the report go here.
    pub work: PathBuf,
    pub features: Features,
    /// Run the binaries on this machine's GPU too.
    pub gpu: bool,
    /// Keep each crate's build outputs (normally removed once its binary is copied).
    pub keep: bool,
}

/// What a run did.
#[derive(Default)]
pub struct Summary {
    pub programs: u64,
    pub batches: Vec<String>,
    pub failures: Vec<Failure>,
    /// Seconds per phase: "build release", "ptxas", "cpu release", …
    pub secs: HashMap<String, f64>,
    pub total_secs: f64,
    /// CPU seconds of the tools it ran (user + system): what the run costs without other load.
    pub cpu_secs: f64,
}

/// CPU seconds (user + system) of this process's finished children, from `/proc/self/stat`.
pub fn children_cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; cutime and cstime are the 16th and 17th fields.
    let rest = stat.rsplit_once(')').map(|x| x.1).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    // USER_HZ is 100 on Linux.
    (ticks(13) + ticks(14)) / 100.0
}

impl Summary {
    fn add_secs(&mut self, phase: String, s: f64) {
        *self.secs.entry(phase).or_default() += s;
    }

    pub fn report(&self, opts: &RunOpts) -> String {
        let mut r = String::new();
        let _ = writeln!(
            r,
            "oxide-fuzz run: seed {}, {} programs in {} crates of up to {}, profiles {}",
            opts.seed,
            self.programs,
            self.batches.len(),
            opts.per_crate,
            opts.profiles.iter().map(|p| p.name()).collect::<Vec<_>>().join("+")
        );
        let rate = self.programs as f64 / self.total_secs.max(1e-9);
        let _ = writeln!(
            r,
            "time: {:.0} s wall ({:.2} programs/s, {:.1} min per 1,000); {:.0} CPU-s in the tools ({:.2} per program)",
            self.total_secs,
            rate,
            1000.0 / rate.max(1e-9) / 60.0,
            self.cpu_secs,
            self.cpu_secs / self.programs.max(1) as f64
        );
        let mut phases: Vec<_> = self.secs.iter().collect();
        phases.sort_by(|a, b| a.0.cmp(b.0));
        for (p, s) in phases {
            let _ = writeln!(r, "  {p:<16} {s:>8.1} s");
        }
        let mut by_kind: HashMap<&str, usize> = HashMap::new();
        for f in &self.failures {
            *by_kind.entry(f.kind.name()).or_default() += 1;
        }
        let _ = writeln!(
            r,
            "failures: {}{}",
            self.failures.len(),
            if by_kind.is_empty() { String::new() } else { format!(" {by_kind:?}") }
        );
        for f in &self.failures {
            let _ = write!(r, "{f}");
        }
        r
    }
}

/// The crate name of batch `b` of a run seeded with `seed`.
pub fn batch_name(seed: u64, b: u64) -> String {
    format!("fuzz_{seed}_{b:04}")
}

/// Runs the whole pipeline; the summary lists every failure.
pub fn run(tools: &Tools, opts: &RunOpts) -> Result<Summary, String> {
    let t0 = Instant::now();
    let cpu0 = children_cpu_secs();
    let mut sum = Summary { programs: opts.count, ..Summary::default() };
    for sub in ["crates", "bin", "refs"] {
        std::fs::create_dir_all(opts.work.join(sub))
            .map_err(|e| format!("create {}: {e}", opts.work.join(sub).display()))?;
    }
    let batches = opts.count.div_ceil(opts.per_crate as u64);
    for b in 0..batches {
        let lo = b * opts.per_crate as u64;
        let hi = (lo + opts.per_crate as u64).min(opts.count);
        let t = Instant::now();
        let programs: Vec<Program> = (lo..hi).map(|i| generate(opts.seed, i, &opts.features)).collect();
        sum.add_secs("generate".into(), t.elapsed().as_secs_f64());
        run_batch(tools, opts, &batch_name(opts.seed, b), programs, &mut sum)?;
        let failed = sum.failures.len();
        eprintln!(
            "[{}/{batches}] programs {lo}..{hi}, {:.0} s, {failed} failures so far",
            b + 1,
            t.elapsed().as_secs_f64()
        );
    }
    sum.total_secs = t0.elapsed().as_secs_f64();
    sum.cpu_secs = children_cpu_secs() - cpu0;
    let mut failures = String::new();
    for f in &sum.failures {
        let _ = write!(failures, "{f}");
    }
    let _ = std::fs::write(opts.work.join("failures.txt"), failures);
    let _ = std::fs::write(opts.work.join("report.txt"), sum.report(opts));
    Ok(sum)
}

/// Builds, checks and runs one batch crate `name` of `programs` in every profile of `opts`,
/// adding its failures to `sum` (and its name to `sum.batches`).
pub fn run_batch(
    tools: &Tools,
    opts: &RunOpts,
    name: &str,
    programs: Vec<Program>,
    sum: &mut Summary,
) -> Result<(), String> {
    for sub in ["crates", "bin", "refs"] {
        std::fs::create_dir_all(opts.work.join(sub))
            .map_err(|e| format!("create {}: {e}", opts.work.join(sub).display()))?;
    }
    let mut batch = Batch { dir: opts.work.join("crates").join(name), name: name.to_string(), programs };
    let mut refs = HashMap::new();
    for &profile in &opts.profiles {
        if let Some(r) = run_profile(tools, opts, &mut batch, profile, sum)? {
            refs.insert(profile, r);
        }
    }
    if let (Some(d), Some(r)) = (refs.get(&Profile::Debug), refs.get(&Profile::Release)) {
        for (id, digest) in d {
            if r.get(id).is_some_and(|x| x != digest) {
                sum.failures.push(Failure {
                    id: id.clone(),
                    kind: Kind::CpuProfiles,
                    profile: None,
                    detail: format!("CPU digest debug {digest} release {}", r[id]),
                });
            }
        }
    }
    if !opts.keep {
        tools.clean_crate(name);
        tools.clean_crate(&format!("{name}_bisect"));
    }
    sum.batches.push(name.to_string());
    Ok(())
}

/// The programs a batch crate holds now (those that made a build fail are taken out).
struct Batch {
    name: String,
    dir: PathBuf,
    programs: Vec<Program>,
}

/// Builds, ptxas-checks and runs one profile of a batch; returns its CPU digests by id.
fn run_profile(
    tools: &Tools,
    opts: &RunOpts,
    batch: &mut Batch,
    profile: Profile,
    sum: &mut Summary,
) -> Result<Option<HashMap<String, String>>, String> {
    let p = profile.name();
    if !build_isolating(tools, batch, profile, sum)? {
        return Ok(None);
    }
    let built = tools.binary(&batch.name, profile);
    let bin = opts.work.join("bin").join(format!("{}.{p}", batch.name));
    std::fs::copy(&built, &bin).map_err(|e| format!("copy {} to {}: {e}", built.display(), bin.display()))?;

    let ptx = tools.ptx(&batch.name, profile);
    let ran = tools.ptxas_check(&ptx, &opts.work)?;
    sum.add_secs("ptxas".into(), ran.secs);
    if !ran.ok {
        let ptx_text = std::fs::read_to_string(&ptx).unwrap_or_default();
        let culprits = culprits_in(&ran.stderr, &ptx_text, &batch.programs);
        let ids: Vec<String> = if culprits.is_empty() {
            vec![format!("{} (unattributed)", batch.name)]
        } else {
            culprits.iter().map(|&k| batch.programs[k].id.clone()).collect()
        };
        for id in ids {
            sum.failures.push(Failure {
                id,
                kind: Kind::Ptxas,
                profile: Some(profile),
                detail: error_excerpt(&ran.stderr),
            });
        }
    }

    let refs = opts.work.join("refs").join(format!("{}.{p}.txt", batch.name));
    let ran = tools.cpu_run(&bin, &refs)?;
    sum.add_secs(format!("cpu {p}"), ran.secs);
    for line in ran.stdout.lines().filter(|l| l.starts_with("FAIL ")) {
        let (id, why) = line[5..].split_once(": ").unwrap_or((&line[5..], ""));
        sum.failures.push(Failure {
            id: id.to_string(),
            kind: Kind::CpuPanic,
            profile: Some(profile),
            detail: why.to_string(),
        });
    }
    if !ran.ok && !ran.stdout.contains(" failed") {
        return Err(format!("{} --cpu-only did not finish:\n{}{}", bin.display(), ran.stdout, ran.stderr));
    }
    if opts.gpu {
        let ran = tools.gpu_run(&bin, &refs)?;
        sum.add_secs(format!("gpu {p}"), ran.secs);
        for line in ran.stdout.lines().filter(|l| l.starts_with("FAIL ")) {
            let (id, why) = line[5..].split_once(": ").unwrap_or((&line[5..], ""));
            if !why.starts_with("cpu panicked") {
                sum.failures.push(Failure {
                    id: id.to_string(),
                    kind: Kind::Mismatch,
                    profile: Some(profile),
                    detail: why.to_string(),
                });
            }
        }
    }
    let text = std::fs::read_to_string(&refs).unwrap_or_default();
    Ok(Some(text.lines().filter_map(|l| l.split_once(' ')).map(|(a, b)| (a.to_string(), b.to_string())).collect()))
}

/// Builds the batch in `profile`; when the build fails, finds the programs that make it fail,
/// records them and builds the rest again. Returns whether a binary was built.
fn build_isolating(tools: &Tools, batch: &mut Batch, profile: Profile, sum: &mut Summary) -> Result<bool, String> {
    loop {
        if batch.programs.is_empty() {
            return Ok(false);
        }
        crate_writer::write_batch(&batch.dir, &batch.name, &batch.programs, &tools.runtime, &tools.lockfile)?;
        let ran = tools.build(&batch.dir, profile)?;
        sum.add_secs(format!("build {}", profile.name()), ran.secs);
        if ran.ok {
            return Ok(true);
        }
        let found = isolate(tools, batch, profile, &ran.stderr, sum)?;
        if found.is_empty() {
            return Err(format!(
                "`cargo oxide build` of {} ({}) failed and no program could be blamed:\n{}",
                batch.name,
                profile.name(),
                error_excerpt(&ran.stderr)
            ));
        }
        let mut found = found;
        found.sort_by_key(|f| std::cmp::Reverse(f.0));
        for (k, failure) in found {
            eprintln!("  {}: {} {} set aside", batch.name, failure.kind.name(), failure.id);
            sum.failures.push(failure);
            batch.programs.remove(k);
        }
    }
}

/// The programs of `batch` that make a build fail, with their failures: named in the error
/// output, else found by plain `cargo check`, else by bisection.
fn isolate(
    tools: &Tools,
    batch: &Batch,
    profile: Profile,
    stderr: &str,
    sum: &mut Summary,
) -> Result<Vec<(usize, Failure)>, String> {
    // rustc's own errors carry a code (`error[E0308]`): the generator wrote invalid Rust.
    let kind_of = |err: &str| {
        if err.contains("error[E") {
            Kind::HostReject
        } else if err.contains("ptxas") {
            Kind::Ptxas
        } else {
            Kind::DeviceBuild
        }
    };
    let failure = |k: usize, kind: Kind, err: &str| {
        (k, Failure { id: batch.programs[k].id.clone(), kind, profile: Some(profile), detail: error_excerpt(err) })
    };
    let named = culprits_in(stderr, "", &batch.programs);
    if !named.is_empty() {
        return Ok(named.into_iter().map(|k| failure(k, kind_of(stderr), stderr)).collect());
    }
    let host = tools.host_check(&batch.dir)?;
    if !host.ok {
        let named = culprits_in(&host.stderr, "", &batch.programs);
        if !named.is_empty() {
            return Ok(named.into_iter().map(|k| failure(k, Kind::HostReject, &host.stderr)).collect());
        }
    }
    // Nothing names a program: build halves until single programs fail.
    let mut out = Vec::new();
    let all: Vec<usize> = (0..batch.programs.len()).collect();
    bisect(tools, batch, profile, &all, &mut out, sum)?;
    Ok(out.into_iter().map(|(k, err)| failure(k, kind_of(&err), &err)).collect())
}

/// Builds the programs `set` of `batch` in a scratch crate; narrows failing sets down to single
/// programs, collected with their error output in `out`.
fn bisect(
    tools: &Tools,
    batch: &Batch,
    profile: Profile,
    set: &[usize],
    out: &mut Vec<(usize, String)>,
    sum: &mut Summary,
) -> Result<(), String> {
    let name = format!("{}_bisect", batch.name);
    let dir = batch.dir.with_file_name(&name);
    let programs: Vec<Program> = set.iter().map(|&k| batch.programs[k].clone()).collect();
    crate_writer::write_batch(&dir, &name, &programs, &tools.runtime, &tools.lockfile)?;
    let ran = tools.build(&dir, profile)?;
    sum.add_secs("bisect".into(), ran.secs);
    if ran.ok {
        return Ok(());
    }
    if set.len() == 1 {
        out.push((set[0], ran.stderr));
        return Ok(());
    }
    let (a, b) = set.split_at(set.len() / 2);
    bisect(tools, batch, profile, a, out, sum)?;
    bisect(tools, batch, profile, b, out, sum)
}

/// Indices of the programs that `text` names: `src/programs/p0042.rs`, `programs::p0042`, the
/// mangled `programs5p0042`, or (with the PTX) the function around a `line N` that ptxas reports.
pub fn culprits_in(text: &str, ptx: &str, programs: &[Program]) -> Vec<usize> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices('p') {
        let before = if i == 0 { b' ' } else { bytes[i - 1] };
        let digits = &text[i + 1..(i + 5).min(text.len())];
        let after = bytes.get(i + 5).copied().unwrap_or(b' ');
        if digits.len() == 4
            && digits.bytes().all(|c| c.is_ascii_digit())
            && !after.is_ascii_digit()
            && matches!(before, b'/' | b':' | b'5' | b' ' | b'`' | b'(')
            && let Ok(k) = digits.parse::<usize>()
            && k < programs.len()
            && !found.contains(&k)
        {
            found.push(k);
        }
    }
    if !ptx.is_empty() {
        let lines: Vec<&str> = ptx.lines().collect();
        for w in text.split(|c: char| !c.is_ascii_alphanumeric()).collect::<Vec<_>>().windows(2) {
            if w[0] == "line"
                && let Ok(n) = w[1].parse::<usize>()
                && let Some(l) =
                    lines[..n.min(lines.len())].iter().rev().find(|l| l.contains(".entry") || l.contains(".func"))
            {
                let new: Vec<usize> = culprits_in(l, "", programs).into_iter().filter(|k| !found.contains(k)).collect();
                found.extend(new);
            }
        }
    }
    found
}
