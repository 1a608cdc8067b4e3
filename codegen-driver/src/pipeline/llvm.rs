//! The LLVM steps: the lowered module → (llvm-link libdevice) → `opt -O3` once → `llc` per arch.

use std::ffi::OsStr;
use std::path::PathBuf;

use oxide_contract::arch::Arch;
use oxide_contract::config::{DeviceDebugInfo, ToolPaths};
use oxide_contract::fast_launch::FastLaunch;
use oxide_contract::limits;
use oxide_contract::naming::files;

use super::ir::{Item, Module};
use super::passes::{self, Runner, STAGES, State};
use super::tools::{ToolError, require, run};
use super::workdir::WorkDir;
use crate::markers::LAUNCH_ATTRS_HIDDEN_FROM_OPT;

/// The whole device module after linking libdevice and `opt -O3`, as LLVM IR text.
pub struct Optimized {
    pub path: PathBuf,
    pub text: String,
    /// For full debug information (`-O0`): the same module at `-O3`, which says which functions
    /// without a device body real code needs (the `-O0` module still calls those that only
    /// panic paths reach, e.g. formatting an assert's message).
    pub optimized_reference: Option<String>,
    /// The kernels (by entry name) that have an unchecked twin: its entry and launch condition.
    pub fast: Vec<(String, FastLaunch)>,
}

impl Optimized {
    /// The text that decides which functions without a device body are errors.
    pub fn liveness_text(&self) -> &str {
        self.optimized_reference.as_deref().unwrap_or(&self.text)
    }

    /// Gives the functions that only the `-O0` module still calls (see `optimized_reference`) a
    /// body that traps, as a device panic does, so the debug build links like the release one.
    pub fn stub_dead_calls(&mut self, names: &[&str]) -> Result<(), ToolError> {
        let mut module = Module::parse(&self.text);
        if !module.define_as_trap(names) {
            return Ok(());
        }
        self.text = module.to_string();
        std::fs::write(&self.path, &self.text).map_err(|e| ToolError::Io(self.path.clone(), e))
    }
}

/// The optimisation level of `opt` and `llc`: none for full debug information (a debugger then
/// sees every variable where the source has it), else `-O3`.
fn opt_level(debuginfo: DeviceDebugInfo) -> &'static str {
    if debuginfo == DeviceDebugInfo::Full { "-O0" } else { "-O3" }
}

/// Writes `<crate>.ll`, links libdevice when the module calls into it, and optimises once for
/// `lowest` (target-independent work; `llc` specialises per arch). Publishes the IR before and
/// after `opt`, so it is there to read even if the build stops at an error later.
pub fn optimize(
    tools: &ToolPaths,
    work: &WorkDir,
    crate_name: &str,
    triple: &str,
    lowest: Arch,
    debuginfo: DeviceDebugInfo,
    ll: &str,
) -> Result<Optimized, ToolError> {
    let ll_path = work.path(&files::llvm_ir(crate_name));
    std::fs::write(&ll_path, ll).map_err(|e| ToolError::Io(ll_path.clone(), e))?;

    // libdevice supplies the math functions PTX has no instruction for.
    let linked = work.path(&format!("{crate_name}.linked.bc"));
    let mut link_args: Vec<&OsStr> = vec![ll_path.as_os_str()];
    if ll.contains("@__nv_") {
        let libdevice =
            require(&tools.libdevice, "libdevice.10.bc", "for the math functions this crate's kernels call")?;
        link_args.extend(["--only-needed".as_ref(), "--internalize".as_ref(), libdevice.as_os_str()]);
    }
    link_args.extend(["-o".as_ref(), linked.as_os_str()]);
    run(&tools.llvm_link, &link_args, &ll_path)?;

    let opt_ll = work.path(&format!("{crate_name}.opt.ll"));
    let triple = format!("-mtriple={triple}");
    let cpu = format!("-mcpu={lowest}");
    let args: [&OsStr; 7] = [
        triple.as_ref(),
        cpu.as_ref(),
        opt_level(debuginfo).as_ref(),
        "-S".as_ref(),
        linked.as_os_str(),
        "-o".as_ref(),
        opt_ll.as_os_str(),
    ];
    run(&tools.opt, &args, &linked)?;
    let optimized_reference = if debuginfo == DeviceDebugInfo::Full {
        let reference = work.path(&format!("{crate_name}.O3.ll"));
        let args: [&OsStr; 7] = [
            triple.as_ref(),
            cpu.as_ref(),
            "-O3".as_ref(),
            "-S".as_ref(),
            linked.as_os_str(),
            "-o".as_ref(),
            reference.as_os_str(),
        ];
        run(&tools.opt, &args, &linked)?;
        let text = std::fs::read_to_string(&reference).map_err(|e| ToolError::Io(reference.clone(), e))?;
        let _ = std::fs::remove_file(&reference);
        Some(text)
    } else {
        None
    };
    let _ = std::fs::remove_file(&linked);
    let text = std::fs::read_to_string(&opt_ll).map_err(|e| ToolError::Io(opt_ll.clone(), e))?;
    let mut module = Module::parse(&text);
    reveal_launch_attributes(&mut module);
    let mut state = State::new(debuginfo);
    let runner = Runner { tools, work, crate_name, target: [&triple, &cpu] };
    runner.run(STAGES, &mut module, &mut state, passes::verify_requested())?;
    let text = module.to_string();
    std::fs::write(&opt_ll, &text).map_err(|e| ToolError::Io(opt_ll.clone(), e))?;
    work.publish(&ll_path)?;
    work.publish(&opt_ll)?;
    Ok(Optimized { path: opt_ll, text, optimized_reference, fast: state.fast })
}

/// The launch bounds become attributes `llc` reads (`markers::LAUNCH_ATTRS_HIDDEN_FROM_OPT`
/// says why they were hidden from the first `opt`).
fn reveal_launch_attributes(module: &mut Module) {
    let hidden = format!("\"{LAUNCH_ATTRS_HIDDEN_FROM_OPT}");
    for item in &mut module.items {
        if let Item::Line(line) = item
            && line.starts_with("attributes #")
            && line.contains(&hidden)
        {
            *line = line.replace(&hidden, "\"");
        }
    }
}

/// `llc` for one arch, at the lowest PTX ISA that targets it and is at least `isa_floor` →
/// `<crate>.<arch>.ptx`.
pub fn llc(
    tools: &ToolPaths,
    work: &WorkDir,
    crate_name: &str,
    optimized: &Optimized,
    arch: Arch,
    isa_floor: (u32, u32),
    debuginfo: DeviceDebugInfo,
) -> Result<PathBuf, ToolError> {
    let ptx = work.path(&files::ptx(crate_name, arch));
    let cpu = format!("-mcpu={arch}");
    let (maj, min) = arch.min_ptx_isa().max(isa_floor);
    let isa = format!("-mattr=+ptx{maj}{min}");
    // Fusion follows the `contract` flags the lowering put on the user's arithmetic.
    let contract = "-fp-contract=on";
    // MachineSink would move the address arithmetic that `opt` hoisted back into the guarded
    // blocks, which then grow past what ptxas predicates (see `optimize`).
    let no_sink = "-disable-machine-sink";
    let input = optimized.path.as_os_str();
    let args: [&OsStr; 8] = [
        opt_level(debuginfo).as_ref(),
        cpu.as_ref(),
        isa.as_ref(),
        contract.as_ref(),
        no_sink.as_ref(),
        input,
        "-o".as_ref(),
        ptx.as_os_str(),
    ];
    run(&tools.llc, &args, &optimized.path)?;
    Ok(ptx)
}

/// LLVM IR text → bitcode (`llvm-link`, which assembles as it links).
pub fn assemble(tools: &ToolPaths, work: &WorkDir, crate_name: &str, ir: &str) -> Result<Vec<u8>, ToolError> {
    let ll = work.path(&format!("{crate_name}.host.ll"));
    std::fs::write(&ll, ir).map_err(|e| ToolError::Io(ll.clone(), e))?;
    let bc = work.path(&format!("{crate_name}.host.bc"));
    run(&tools.llvm_link, &[ll.as_os_str(), "-o".as_ref(), bc.as_os_str()], &ll)?;
    super::tools::read(&bc)
}

/// The PTX ISA the module needs whatever the arch (`llc` takes the higher of it and the arch's
/// lowest): the ISA whose parameter space is 32,764 bytes when a kernel's parameters exceed the
/// classic 4 KB, and [`limits::INLINE_PTX_ISA`] when it holds hand-written PTX.
pub fn isa_floor(large_params: bool, user_ptx: bool) -> (u32, u32) {
    let mut floor = (0, 0);
    if large_params {
        floor = floor.max(limits::LARGE_PARAMS_PTX_ISA);
    }
    if user_ptx {
        floor = floor.max(limits::INLINE_PTX_ISA);
    }
    floor
}

/// Names of functions still called or referenced in the optimised module (declarations aside).
pub fn still_referenced<'a>(optimized: &str, symbols: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let module = Module::parse(optimized);
    let named = module.globals_named();
    symbols.filter(|sym| named.contains(sym)).collect()
}

#[cfg(test)]
mod tests {
    use super::still_referenced;
    use crate::pipeline::ir::Module;

    #[test]
    fn references_survive_only_outside_declarations() {
        let module = "declare void @gone(i32)\ndeclare void @kept()\ndefine void @k() {\n  call void @kept()\n  call void @kept2()\n  ret void\n}\n";
        let names = ["gone", "kept", "kep"];
        assert_eq!(still_referenced(module, names.iter().copied()), vec!["kept"]);
    }

    #[test]
    fn dead_declarations_become_trapping_bodies() {
        let module = "declare noundef i1 @f(ptr dereferenceable(24), i64) unnamed_addr #3\ndeclare void @g()\n";
        let mut m = Module::parse(module);
        assert!(m.define_as_trap(&["f"]));
        let text = m.to_string();
        assert_eq!(
            text,
            "define internal noundef i1 @f(ptr dereferenceable(24), i64) {\n  call void @llvm.trap()\n  unreachable\n}\n\
             declare void @g()\ndeclare void @llvm.trap()\n"
        );
    }
}
