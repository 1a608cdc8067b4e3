//! The bundle object: the device artifacts as one read-only symbol in an ELF object that rustc
//! links into the crate like any other codegen unit (contract §6).

use std::path::PathBuf;

use object::write::{Object, Symbol, SymbolSection};
use object::{Architecture, BinaryFormat, Endianness, SectionFlags, SectionKind, SymbolFlags, SymbolKind, SymbolScope};
use rustc_codegen_ssa::{CompiledModule, ModuleKind};
use rustc_session::config::{OutputFilenames, OutputType};

/// What the device pipeline hands to `join_codegen`.
pub struct DeviceOutput {
    pub crate_name: String,
    pub bundle: Vec<u8>,
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
            oxide_contract::naming::BUNDLE_SECTION.as_bytes().to_vec(),
            SectionKind::ReadOnlyData,
        );
        // SHF_GNU_RETAIN: `--gc-sections` must keep the bundle even when nothing references its
        // symbol (a program that loads its kernels from a file, or lists the bundles of its
        // executable with `cuda_core::embedded`, never names it).
        obj.section_mut(section).flags =
            SectionFlags::Elf { sh_flags: u64::from(object::elf::SHF_ALLOC | object::elf::SHF_GNU_RETAIN) };
        let offset = obj.append_section_data(section, &self.bundle, 16);
        obj.add_symbol(Symbol {
            name: oxide_contract::naming::bundle_symbol(&self.crate_name).into_bytes(),
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
        let out = DeviceOutput { crate_name: "hello".into(), bundle: vec![7u8; 100] };
        let bytes = out.object_bytes().unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        let sym = file.symbols().find(|s| s.name() == Ok("__cuda_oxide_bundle_hello")).unwrap();
        assert_eq!(sym.size(), 100);
        assert!(sym.is_global());
        let section = file.section_by_name(oxide_contract::naming::BUNDLE_SECTION).unwrap();
        let object::SectionFlags::Elf { sh_flags } = section.flags() else { panic!("not ELF flags") };
        assert_ne!(sh_flags & u64::from(object::elf::SHF_GNU_RETAIN), 0, "kept by --gc-sections");
    }
}
