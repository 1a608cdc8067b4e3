//! The bundle object: the device artifacts as one read-only symbol in an ELF object that rustc
//! links into the crate like any other codegen unit (contract §6), and the exported-symbol entry
//! that keeps it in every binary linking the crate.
//!
//! Every bundle lies in the section `cuda_oxide_bundles` (`SHF_GNU_RETAIN`, so `--gc-sections`
//! keeps it), where the runtime finds all of them between the linker's `__start_`/`__stop_`
//! symbols. An rlib's member is linked only when something refers to one of its symbols, so the
//! bundle symbol is also an exported `used` symbol of the crate: rustc's `symbols.o` refers to it
//! in every executable that links the crate.

use std::path::PathBuf;
use std::sync::OnceLock;

use object::write::{Object, Symbol, SymbolSection};
use object::{
    Architecture, BinaryFormat, Endianness, SectionFlags, SectionKind, SymbolFlags, SymbolKind, SymbolScope, elf,
};
use oxide_contract::naming;
use rustc_codegen_ssa::{CompiledModule, ModuleKind};
use rustc_middle::middle::exported_symbols::{ExportedSymbol, SymbolExportInfo, SymbolExportKind, SymbolExportLevel};
use rustc_middle::query::LocalCrate;
use rustc_middle::ty::{SymbolName, TyCtxt};
use rustc_middle::util::Providers;
use rustc_session::config::{OutputFilenames, OutputType};

/// What the device pipeline hands to `join_codegen`.
pub struct DeviceOutput {
    /// The bundle's symbol ([`bundle_symbol`]).
    pub symbol: String,
    pub bundle: Vec<u8>,
    /// LLVM bitcode defining the same symbol, for the object's `.llvmbc` section (see
    /// [`host_ir`]); `None` for crates that are never an rlib.
    pub bitcode: Option<Vec<u8>>,
    /// [`host_stand_ins`]: the names that get a weak trapping definition on the host.
    pub stand_ins: Vec<String>,
}

/// The libdevice functions (`__nv_*`) this crate declares in plain `extern "C"` blocks. Device
/// code calls them, and they exist only there (the device linker takes them from libdevice); but
/// the host copy of that code refers to them too, so the host binary gets a weak definition of
/// each that traps (`ud2`), which links and is never called. (`#[device] extern "C"` blocks need
/// none: `#[device]` gives their functions a host body.)
pub fn host_stand_ins(tcx: TyCtxt<'_>) -> Vec<String> {
    let mut names: Vec<String> = tcx
        .hir_crate_items(())
        .foreign_items()
        .map(|item| item.owner_id.to_def_id())
        .filter(|&def_id| matches!(tcx.def_kind(def_id), rustc_hir::def::DefKind::Fn))
        .map(|def_id| tcx.symbol_name(rustc_middle::ty::Instance::mono(tcx, def_id)).name.to_string())
        .filter(|name| name.starts_with(naming::LIBDEVICE_PREFIX))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// LLVM IR (for the host target) defining the bundle symbol with the bundle's bytes, in the
/// bundle section. Under LTO, rustc takes an rlib's objects as the bitcode in their `.llvmbc`
/// section instead of their machine code; with this module there, the bundle survives LTO.
pub fn host_ir(symbol: &str, bundle: &[u8], stand_ins: &[String], triple: &str, datalayout: &str) -> String {
    let mut bytes = String::with_capacity(bundle.len() * 3);
    for &b in bundle {
        if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
            bytes.push(b as char);
        } else {
            bytes.push_str(&format!("\\{b:02X}"));
        }
    }
    let n = bundle.len();
    let traps: String = stand_ins
        .iter()
        .map(|name| format!("define weak void @{name}() {{\n  call void @llvm.trap()\n  unreachable\n}}\n"))
        .collect();
    let declare_trap = if stand_ins.is_empty() { "" } else { "declare void @llvm.trap()\n" };
    format!(
        "target datalayout = \"{datalayout}\"\ntarget triple = \"{triple}\"\n\n\
         @{symbol} = hidden constant [{n} x i8] c\"{bytes}\", section \"{section}\", align 16\n\
         @llvm.used = appending global [1 x ptr] [ptr @{symbol}], section \"llvm.metadata\"\n\
         {declare_trap}{traps}",
        section = naming::BUNDLE_SECTION
    )
}

/// This crate's bundle symbol: the crate name and its `StableCrateId`, which tells apart crates
/// of one name (a package's library and binary).
pub fn bundle_symbol(tcx: TyCtxt<'_>) -> String {
    let crate_id = tcx.stable_crate_id(rustc_hir::def_id::LOCAL_CRATE).as_u64();
    naming::bundle_symbol(tcx.crate_name(rustc_hir::def_id::LOCAL_CRATE).as_str(), crate_id)
}

/// This crate's artifact folder (`naming::crate_dir_name`): `.test` for a test harness, `.bin`
/// for a binary that links a library of its own name (a package's `main.rs` beside its `lib.rs`).
pub fn crate_dir(tcx: TyCtxt<'_>) -> String {
    let name = tcx.crate_name(rustc_hir::def_id::LOCAL_CRATE);
    let role = if tcx.sess.opts.test {
        naming::CrateRole::TestHarness
    } else if tcx.crate_types().contains(&rustc_session::config::CrateType::Executable)
        && tcx.crates(()).iter().any(|&c| tcx.crate_name(c) == name)
    {
        naming::CrateRole::BinaryBesideLibrary
    } else {
        naming::CrateRole::Plain
    };
    naming::crate_dir_name(name.as_str(), role)
}

type ExportedSymbols = for<'tcx> fn(TyCtxt<'tcx>, LocalCrate) -> &'tcx [(ExportedSymbol<'tcx>, SymbolExportInfo)];

/// rustc's own `exported_non_generic_symbols` provider, which ours extends.
static RUSTC_EXPORTED_SYMBOLS: OnceLock<ExportedSymbols> = OnceLock::new();

/// Makes the bundle symbol an exported `used` symbol of every crate that has kernels.
pub fn provide(providers: &mut Providers) {
    let _ = RUSTC_EXPORTED_SYMBOLS.set(providers.queries.exported_non_generic_symbols);
    providers.queries.exported_non_generic_symbols = exported_symbols_with_bundle;
}

fn exported_symbols_with_bundle<'tcx>(
    tcx: TyCtxt<'tcx>,
    krate: LocalCrate,
) -> &'tcx [(ExportedSymbol<'tcx>, SymbolExportInfo)] {
    let rustc = RUSTC_EXPORTED_SYMBOLS.get().expect("provide() ran before any query");
    let symbols = rustc(tcx, krate);
    if !tcx.sess.opts.output_types.should_codegen() || crate::lower::collect::kernels(tcx).is_empty() {
        return symbols;
    }
    let bundle = ExportedSymbol::NoDefId(SymbolName::new(tcx, &bundle_symbol(tcx)));
    let info = SymbolExportInfo {
        level: SymbolExportLevel::Rust,
        kind: SymbolExportKind::Data,
        used: true,
        rustc_std_internal_symbol: false,
    };
    tcx.arena.alloc_from_iter(symbols.iter().copied().chain([(bundle, info)]))
}

impl DeviceOutput {
    /// Writes the object file and describes it as an extra codegen unit of the crate.
    pub fn into_compiled_module(self, outputs: &OutputFilenames) -> std::io::Result<CompiledModule> {
        let name = "cuda_oxide_bundle".to_string();
        let path: PathBuf = outputs.temp_path_for_cgu(OutputType::Object, &name);
        std::fs::write(&path, self.object_bytes()?)?;
        Ok(CompiledModule {
            name,
            kind: ModuleKind::Regular,
            object: Some(path),
            dwarf_object: None,
            bytecode: None,
            assembly: None,
            llvm_ir: None,
            links_from_incr_cache: Vec::new(),
        })
    }

    fn object_bytes(&self) -> std::io::Result<Vec<u8>> {
        let mut obj = Object::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
        let section = obj.add_section(
            obj.segment_name(object::write::StandardSegment::Data).to_vec(),
            naming::BUNDLE_SECTION.as_bytes().to_vec(),
            SectionKind::ReadOnlyData,
        );
        obj.section_mut(section).flags =
            SectionFlags::Elf { sh_flags: u64::from(elf::SHF_ALLOC | elf::SHF_GNU_RETAIN) };
        let offset = obj.append_section_data(section, &self.bundle, 16);
        if let Some(bitcode) = &self.bitcode {
            // What LTO reads instead of the machine code; the linker drops it otherwise.
            let llvmbc = obj.add_section(Vec::new(), b".llvmbc".to_vec(), SectionKind::Other);
            obj.section_mut(llvmbc).flags = SectionFlags::Elf { sh_flags: u64::from(elf::SHF_EXCLUDE) };
            obj.append_section_data(llvmbc, bitcode, 1);
        }
        if !self.stand_ins.is_empty() {
            let text = obj.add_section(
                obj.segment_name(object::write::StandardSegment::Text).to_vec(),
                b".text.cuda_oxide_stand_ins".to_vec(),
                SectionKind::Text,
            );
            let ud2 = obj.append_section_data(text, &[0x0f, 0x0b], 16);
            for name in &self.stand_ins {
                obj.add_symbol(Symbol {
                    name: name.as_bytes().to_vec(),
                    value: ud2,
                    size: 2,
                    kind: SymbolKind::Text,
                    scope: SymbolScope::Linkage,
                    weak: true,
                    section: SymbolSection::Section(text),
                    flags: SymbolFlags::None,
                });
            }
        }
        obj.add_symbol(Symbol {
            name: self.symbol.as_bytes().to_vec(),
            value: offset,
            size: self.bundle.len() as u64,
            kind: SymbolKind::Data,
            scope: SymbolScope::Linkage,
            weak: false,
            section: SymbolSection::Section(section),
            flags: SymbolFlags::None,
        });
        obj.write().map_err(std::io::Error::other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::{Object as _, ObjectSection as _, ObjectSymbol as _};

    #[test]
    fn object_defines_the_bundle_symbol() {
        let out = DeviceOutput {
            symbol: naming::bundle_symbol("hello", 1),
            bundle: vec![7u8; 100],
            bitcode: Some(b"BC\xc0\xde".to_vec()),
            stand_ins: vec!["__nv_asinf".into()],
        };
        let bytes = out.object_bytes().unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        let sym = file.symbols().find(|s| s.name() == Ok("__cuda_oxide_bundle_hello_0000000000000001")).unwrap();
        assert_eq!(sym.size(), 100);
        assert!(sym.is_global());
        let section = file.section_by_name(naming::BUNDLE_SECTION).expect("the bundle section");
        let object::SectionFlags::Elf { sh_flags } = section.flags() else { panic!("ELF flags") };
        assert_ne!(sh_flags & u64::from(elf::SHF_GNU_RETAIN), 0, "the linker must keep the section");
        assert_eq!(file.section_by_name(".llvmbc").expect("bitcode for LTO").data().unwrap(), b"BC\xc0\xde");
        let stand_in = file.symbols().find(|s| s.name() == Ok("__nv_asinf")).expect("the libdevice stand-in");
        assert!(stand_in.is_weak() && stand_in.is_definition(), "a weak definition the host links");
        let text = file.section_by_index(stand_in.section_index().unwrap()).unwrap();
        assert_eq!(&text.data().unwrap()[stand_in.address() as usize..][..2], &[0x0f, 0x0b], "ud2");
    }

    #[test]
    fn host_ir_spells_every_byte() {
        let ir = host_ir("sym", b"A\"\\\n\x00 z", &["__nv_sinf".to_string()], "x86_64-unknown-linux-gnu", "e-m:e");
        assert!(
            ir.contains(
                r#"@sym = hidden constant [7 x i8] c"A\22\5C\0A\00 z", section "cuda_oxide_bundles", align 16"#
            ),
            "{ir}"
        );
        assert!(ir.contains("@llvm.used = appending global [1 x ptr] [ptr @sym]"), "{ir}");
        assert!(ir.contains("define weak void @__nv_sinf() {\n  call void @llvm.trap()"), "{ir}");
    }
}
