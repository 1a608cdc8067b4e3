//! `cargo oxide profile`: the built binary under Nsight Compute (`ncu --clock-control none`), then
//! a per-kernel summary read back from the report: time, DRAM bandwidth and FP32 FLOP rate
//! against the GPU's ceilings, occupancy, and the Rust lines with the most warp samples (from
//! the line information that device builds carry by default).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

use crate::build::run_under;
use crate::cli::ProfileArgs;
use crate::debug::find_cuda_tool;

/// The metrics the summary is computed from (ncu's names; the roofline section uses the same).
const METRICS: [&str; 12] = [
    TIME,
    DRAM_RATE,
    DRAM_PEAK,
    DRAM_CLOCK,
    FFMA,
    FADD,
    FMUL,
    FFMA_PEAK,
    SM_CLOCK,
    OCCUPANCY,
    THEORETICAL_OCCUPANCY,
    "launch__registers_per_thread",
];
const TIME: &str = "gpu__time_duration.sum";
const DRAM_RATE: &str = "dram__bytes.sum.per_second";
const DRAM_PEAK: &str = "dram__bytes.sum.peak_sustained";
const DRAM_CLOCK: &str = "dram__cycles_elapsed.avg.per_second";
const FFMA: &str = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum";
const FADD: &str = "sm__sass_thread_inst_executed_op_fadd_pred_on.sum";
const FMUL: &str = "sm__sass_thread_inst_executed_op_fmul_pred_on.sum";
const FFMA_PEAK: &str = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained";
const SM_CLOCK: &str = "sm__cycles_elapsed.avg.per_second";
const OCCUPANCY: &str = "sm__warps_active.avg.pct_of_peak_sustained_active";
const THEORETICAL_OCCUPANCY: &str = "sm__maximum_warps_per_active_cycle_pct";

/// Builds (release unless `--profile` names another), profiles every kernel launch and prints
/// the summary; the report stays in `<target>/oxide/profile/` for `ncu-ui`.
pub fn profile(args: &ProfileArgs) -> Result<ExitCode> {
    let ncu = find_ncu()?;
    let mut run = args.run.clone();
    if run.build.profile.is_none() {
        run.build.release = true;
    }
    let report_dir = std::env::temp_dir().join(format!("cargo-oxide-profile-{}", std::process::id()));
    std::fs::create_dir_all(&report_dir).with_context(|| format!("could not create {}", report_dir.display()))?;
    let base = report_dir.join("profile");
    let mut wrapper: Vec<std::ffi::OsString> = vec![ncu.clone().into()];
    for arg in ["--clock-control", "none", "--target-processes", "all", "--import-source", "yes"] {
        wrapper.push(arg.into());
    }
    for section in ["SpeedOfLight", "Occupancy", "LaunchStats", "SourceCounters"] {
        wrapper.extend(["--section".into(), section.into()]);
    }
    wrapper.extend(["--metrics".into(), METRICS.join(",").into(), "-f".into(), "-o".into(), base.clone().into()]);
    if let Some(kernel) = &args.kernel {
        wrapper.extend(["--kernel-name".into(), format!("regex:{kernel}").into()]);
    }
    // The sources go into the report when it is recorded (ncu takes `--source-folders` only
    // together with `--import-source yes`), so reading the report back needs no folders.
    if let Some(folders) = &args.source_folders {
        wrapper.extend(["--source-folders".into(), folders.into()]);
    }
    let status = run_under(&run, Some(wrapper))?;
    let report = base.with_extension("ncu-rep");
    if !report.is_file() {
        bail!(
            "ncu wrote no report ({}): did the program launch a kernel? ncu's own messages are above",
            report.display()
        );
    }
    let raw = ncu_csv(&ncu, &report, &["--page", "raw", "--print-units", "base", "--metrics", &METRICS.join(",")])?;
    let kernels = parse_kernels(&raw);
    if kernels.is_empty() {
        bail!("no kernel results in {}; open it with `ncu-ui` or `ncu --import`", report.display());
    }
    println!("{}", summary_table(&kernels));
    let mut seen = Vec::new();
    for k in &kernels {
        if seen.contains(&k.name) {
            continue;
        }
        seen.push(k.name.clone());
        // ncu (2025.3) prints counters per source line only in the mixed view: each line's row
        // carries the sums of the SASS rows under it.
        let source_args =
            ["--page", "source", "--print-source", "cuda,sass", "--kernel-name", &k.name, "--launch-count", "1"];
        let source = ncu_csv(&ncu, &report, &source_args);
        match source.map(|text| hot_lines(&text, args.lines)) {
            Ok(lines) if !lines.is_empty() => {
                println!("\nhottest lines of {} (warp samples):", k.name);
                for l in lines {
                    let file = std::path::Path::new(&l.file).file_name().map(|f| f.to_string_lossy().into_owned());
                    let place = format!("{}:{}", file.unwrap_or_default(), l.line);
                    println!("  {:>6}  {:<22} {}", l.samples, place, l.text.trim());
                }
            }
            Ok(_) => println!(
                "\n{}: no source counters: the report holds no Rust source for it (built with --device-debug none, \
                 or the sources are not where the build recorded them: give --source-folders); see `ncu --import {} --page source`",
                k.name,
                report.display()
            ),
            Err(e) => println!("\n{}: could not read the source view: {e:#}", k.name),
        }
    }
    println!("\nreport: {} (open with ncu-ui)", report.display());
    Ok(status)
}

/// `ncu`: on PATH, in the CUDA toolkit, or in a standalone Nsight Compute install.
fn find_ncu() -> Result<PathBuf> {
    if let Ok(path) = find_cuda_tool("ncu", &["bin"]) {
        return Ok(path);
    }
    let mut dirs: Vec<PathBuf> = crate::tools::cuda_roots();
    dirs.push("/opt/nvidia".into());
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name.to_string_lossy().starts_with("nsight-compute") {
                let ncu = entry.path().join("ncu");
                if ncu.is_file() {
                    return Ok(ncu);
                }
                // /opt/nvidia/nsight-compute/<version>/ncu
                for version in std::fs::read_dir(entry.path()).into_iter().flatten().flatten() {
                    if version.path().join("ncu").is_file() {
                        return Ok(version.path().join("ncu"));
                    }
                }
            }
        }
    }
    bail!(
        "`ncu` (Nsight Compute) not found on PATH, in CUDA_HOME, /usr/local/cuda or /opt/nvidia/nsight-compute; \
         install Nsight Compute (it ships with the CUDA toolkit) or put `ncu` on PATH"
    )
}

fn ncu_csv(ncu: &Path, report: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new(ncu)
        .arg("--import")
        .arg(report)
        .arg("--csv")
        .args(args)
        .output()
        .with_context(|| format!("could not run {}", ncu.display()))?;
    if !out.status.success() {
        bail!("ncu --import failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The fields of one CSV line (ncu quotes every field; quotes inside are doubled).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

/// A number as ncu prints it (thousands separated by `,`); `None` for `n/a` and the like.
fn number(text: &str) -> Option<f64> {
    text.trim().replace(',', "").parse().ok()
}

/// The CSV rows after the header that starts with `first_column`, as (header, rows).
fn table(csv: &str, first_column: &str) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let mut lines = csv.lines().skip_while(|l| !l.starts_with(&format!("\"{first_column}\"")));
    let header = csv_fields(lines.next()?);
    Some((header, lines.filter(|l| l.starts_with('"')).map(csv_fields).collect()))
}

/// One profiled kernel launch.
#[derive(Debug, PartialEq)]
struct KernelResult {
    name: String,
    /// Seconds.
    time: f64,
    /// Bytes per second, achieved and peak.
    dram: Option<(f64, f64)>,
    /// FP32 operations per second (an FMA counts two), achieved and peak.
    flops: Option<(f64, f64)>,
    /// Achieved and theoretical occupancy, percent.
    occupancy: Option<(f64, f64)>,
}

fn parse_kernels(raw: &str) -> Vec<KernelResult> {
    let Some((header, rows)) = table(raw, "ID") else { return Vec::new() };
    let col = |name: &str| header.iter().position(|h| h == name);
    let name_col = col("Kernel Name");
    rows.iter()
        .filter_map(|row| {
            let get = |metric: &str| col(metric).and_then(|i| row.get(i)).and_then(|v| number(v));
            let name = row.get(name_col?)?.clone();
            let time = get(TIME)? * 1e-9;
            let dram = get(DRAM_RATE).zip(get(DRAM_PEAK).zip(get(DRAM_CLOCK)).map(|(peak, clock)| peak * clock));
            let ops = 2.0 * get(FFMA).unwrap_or(0.0) + get(FADD).unwrap_or(0.0) + get(FMUL).unwrap_or(0.0);
            let flops = get(FFMA_PEAK).zip(get(SM_CLOCK)).map(|(peak, clock)| (ops / time, 2.0 * peak * clock));
            let occupancy = get(OCCUPANCY).zip(get(THEORETICAL_OCCUPANCY));
            Some(KernelResult { name, time, dram: dram.filter(|d| d.1 > 0.0), flops, occupancy })
        })
        .collect()
}

fn summary_table(kernels: &[KernelResult]) -> String {
    let pct = |(a, p): (f64, f64)| if p > 0.0 { format!("{:.0}%", 100.0 * a / p) } else { "-".into() };
    let mut out = format!(
        "{:<28} {:>10} {:>16} {:>6} {:>16} {:>6} {:>14}\n",
        "kernel", "time us", "DRAM GB/s", "of pk", "FP32 GFLOP/s", "of pk", "occupancy"
    );
    for k in kernels {
        let dram = k.dram.map_or("-".into(), |(a, p)| format!("{:.1} / {:.0}", a / 1e9, p / 1e9));
        let flops = k.flops.map_or("-".into(), |(a, p)| format!("{:.1} / {:.0}", a / 1e9, p / 1e9));
        let occupancy = k.occupancy.map_or("-".into(), |(a, t)| format!("{a:.0}% (max {t:.0}%)"));
        out.push_str(&format!(
            "{:<28} {:>10.2} {:>16} {:>6} {:>16} {:>6} {:>14}\n",
            k.name,
            k.time * 1e6,
            dram,
            k.dram.map_or("-".into(), pct),
            flops,
            k.flops.map_or("-".into(), pct),
            occupancy
        ));
    }
    out.trim_end().to_string()
}

/// A source line with its warp samples.
#[derive(Debug, PartialEq)]
struct HotLine {
    /// The source file, as the report names it (`File Name` rows); empty when it names none.
    file: String,
    line: usize,
    samples: u64,
    text: String,
}

/// The `n` source lines with the most warp stall samples in ncu's CUDA-source view. The CSV has,
/// per source file, a `"File Name","<path>"` row, then a header (`"Line No","Source",` and the
/// counters), then one row per line of the file.
fn hot_lines(csv: &str, n: usize) -> Vec<HotLine> {
    /// Where a header puts the counts, the line number and the source text.
    struct Columns {
        samples: usize,
        line: Option<usize>,
        source: Option<usize>,
    }
    fn columns(header: &[String]) -> Option<Columns> {
        let col = |pred: &dyn Fn(&str) -> bool| header.iter().position(|c| pred(c));
        let samples =
            col(&|c| c.starts_with("Warp Stall Sampling (All")).or_else(|| col(&|c| c == "Instructions Executed"))?;
        let line = col(&|c| c == "#" || c == "# Line" || c == "Line" || c == "Line No");
        Some(Columns { samples, line, source: col(&|c| c == "Source") })
    }

    let mut file = String::new();
    // `None` before a file's header; `Some(None)` after a header without counters.
    let mut current: Option<Option<Columns>> = None;
    let mut lines = Vec::new();
    for row in csv.lines().filter(|l| l.starts_with('"')).map(csv_fields) {
        if row.first().is_some_and(|f| f == "File Name" || f == "File Path") {
            file = row.get(1).cloned().unwrap_or_default();
            current = None;
            continue;
        }
        if current.is_none() && row.iter().any(|f| f == "Source") {
            current = Some(columns(&row));
            continue;
        }
        let Some(Some(c)) = &current else { continue };
        let Some(count) = row.get(c.samples).and_then(|v| number(v)).map(|v| v as u64) else { continue };
        let line = match c.line.map(|i| row.get(i).and_then(|v| number(v))) {
            Some(Some(line)) => line as usize,
            // A SASS row of the mixed view: already counted in its source line's row.
            Some(None) => continue,
            None => 0,
        };
        let text = c.source.and_then(|i| row.get(i)).cloned().unwrap_or_default();
        if count > 0 {
            lines.push(HotLine { file: file.clone(), line, samples: count, text });
        }
    }
    lines.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.line.cmp(&b.line)));
    lines.truncate(n);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_keep_quoted_commas() {
        assert_eq!(csv_fields(r#""a","1,234.5","say ""hi""""#), ["a", "1,234.5", "say \"hi\""]);
        assert_eq!(number("1,234.5"), Some(1234.5));
        assert_eq!(number("n/a"), None);
    }

    #[test]
    fn kernels_and_ceilings_from_the_raw_page() {
        let header: Vec<String> =
            ["ID", "Kernel Name"].iter().map(|s| s.to_string()).chain(METRICS.map(String::from)).collect();
        let quote = |v: &[String]| v.iter().map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(",");
        // 1 ms; 2 TB/s of 4 TB/s (2 bytes/cycle at 2 GHz); 1e9 FMAs = 2 TFLOP/s of 2*1e3*1e9.
        let values: Vec<String> =
            ["0", "transpose", "1,000,000", "2e12", "2000", "2e9", "1e9", "0", "0", "1000", "1e9", "50", "100", "32"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let csv = format!("==PROF== noise\n{}\n{}\n", quote(&header), quote(&values));
        let k = parse_kernels(&csv);
        assert_eq!(k.len(), 1, "{csv}");
        assert_eq!(k[0].name, "transpose");
        assert!((k[0].time - 1e-3).abs() < 1e-12);
        assert_eq!(k[0].dram, Some((2e12, 4e12)));
        assert_eq!(k[0].flops, Some((2e12, 2e12)));
        assert_eq!(k[0].occupancy, Some((50.0, 100.0)));
        let table = summary_table(&k);
        assert!(table.contains("transpose") && table.contains("50%") && table.contains("2000.0 / 4000"), "{table}");
    }

    #[test]
    fn hottest_lines_by_warp_samples() {
        let csv = "\"File Name\",\"/src/k.rs\"\n\
                   \"Line No\",\"Source\",\"Warp Stall Sampling (All Samples)\",\"Instructions Executed\"\n\
                   \"1\",\"fn k() {\",\"0\",\"0\"\n\
                   \"2\",\"    let x = a[i];\",\"17\",\"4\"\n\
                   \"3\",\"    out[i] = x;\",\"40\",\"4\"\n";
        let hot = hot_lines(csv, 5);
        assert_eq!(hot.len(), 2);
        assert_eq!((hot[0].line, hot[0].samples, hot[0].text.as_str()), (3, 40, "    out[i] = x;"));
        assert_eq!(hot[0].file, "/src/k.rs");
        assert_eq!(hot[1].line, 2);
        assert!(hot_lines("no table", 5).is_empty());
    }

    /// The mixed source/SASS view as the H200's ncu 2025.3.1 writes it: a line's row sums the
    /// SASS rows after it, which have no line number and must not be counted again.
    #[test]
    fn hottest_lines_from_the_mixed_source_and_sass_view() {
        let csv = "\"File Path\",\"/work/bench/src/kernels.rs\"\n\
                   \"Function Name\",\"transpose\"\n\
                   \"Line No\",\"Source\",\"Address\",\"Source\",\"Warp Stall Sampling (All Samples)\",\"# Samples\"\n\
                   \"188\",\"let y = by * TILE + ty;\",\"-\",\"-\",\"253\",\"253\"\n\
                   \"\",\"\",\"0x7fb8bf7a2b40\",\"      ULDC UR10, c[0x0][0x230]\",\"14\",\"14\"\n\
                   \"\",\"\",\"...\",\"...\",\"-\",\"-\"\n\
                   \"191\",\"if x < w && y + j < h {\",\"-\",\"-\",\"1771\",\"1771\"\n\
                   \"\",\"\",\"0x7fb8bf7a2bd0\",\"      CS2R R14, SRZ\",\"991\",\"991\"\n";
        let hot = hot_lines(csv, 5);
        let got: Vec<_> = hot.iter().map(|l| (l.line, l.samples, l.text.as_str())).collect();
        assert_eq!(got, [(191, 1771, "if x < w && y + j < h {"), (188, 253, "let y = by * TILE + ty;")]);
        assert_eq!(hot[0].file, "/work/bench/src/kernels.rs");
    }
}
