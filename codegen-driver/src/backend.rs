//! `OxideBackend`: rustc's LLVM backend for the host, plus the device pipeline for crates with kernels.

use std::any::Any;

use rustc_codegen_ssa::traits::CodegenBackend;
use rustc_codegen_ssa::{CompiledModules, CrateInfo, TargetConfig};
use rustc_data_structures::fx::FxIndexMap;
use rustc_metadata::EncodedMetadata;
use rustc_middle::dep_graph::{WorkProduct, WorkProductId};
use rustc_middle::ty::TyCtxt;
use rustc_middle::util::Providers;
use rustc_session::Session;
use rustc_session::config::{OutputFilenames, PrintRequest};
use rustc_span::Symbol;

use crate::pipeline::PendingDevice;

pub struct OxideBackend {
    llvm: Box<dyn CodegenBackend>,
}

/// What `codegen_crate` hands to `join_codegen`: the host's ongoing codegen and our device build.
struct Ongoing {
    host: Box<dyn Any>,
    device: Option<PendingDevice>,
}

impl OxideBackend {
    /// The backend as rustc's driver wants it, boxed.
    pub fn boxed(_sess: &Session) -> Box<dyn CodegenBackend> {
        Box::new(OxideBackend { llvm: rustc_codegen_llvm::LlvmCodegenBackend::new() })
    }
}

impl CodegenBackend for OxideBackend {
    fn name(&self) -> &'static str {
        // Some of rustc's own logic keys on the backend name; the host side *is* LLVM.
        self.llvm.name()
    }
    fn init(&self, sess: &Session) {
        self.llvm.init(sess)
    }
    fn print(&self, req: &PrintRequest, out: &mut String, sess: &Session) {
        self.llvm.print(req, out, sess)
    }
    fn target_config(&self, sess: &Session) -> TargetConfig {
        self.llvm.target_config(sess)
    }
    fn print_passes(&self) {
        self.llvm.print_passes()
    }
    fn print_version(&self) {
        self.llvm.print_version()
    }
    fn replaced_intrinsics(&self) -> Vec<Symbol> {
        // The device builder implements the same intrinsics (see `device::intrinsic`).
        self.llvm.replaced_intrinsics()
    }
    fn thin_lto_supported(&self) -> bool {
        self.llvm.thin_lto_supported()
    }
    fn has_zstd(&self) -> bool {
        self.llvm.has_zstd()
    }
    fn has_mnemonic(&self, sess: &Session, mnemonic: &str) -> bool {
        self.llvm.has_mnemonic(sess, mnemonic)
    }
    fn metadata_loader(&self) -> Box<rustc_metadata::creader::MetadataLoaderDyn> {
        self.llvm.metadata_loader()
    }
    fn provide(&self, providers: &mut Providers) {
        self.llvm.provide(providers);
        crate::pipeline::object::provide(providers);
    }
    fn target_cpu(&self, sess: &Session) -> String {
        self.llvm.target_cpu(sess)
    }

    fn codegen_crate<'tcx>(&self, tcx: TyCtxt<'tcx>) -> Box<dyn Any> {
        // Device lowering first: its errors should stop the build before LLVM spends time on the
        // host. Its external tools then run while LLVM generates the host code.
        let device = crate::pipeline::compile_crate(tcx);
        let host = self.llvm.codegen_crate(tcx);
        Box::new(Ongoing { host, device })
    }

    fn join_codegen(
        &self,
        ongoing: Box<dyn Any>,
        sess: &Session,
        outputs: &OutputFilenames,
        crate_info: &CrateInfo,
    ) -> (CompiledModules, FxIndexMap<WorkProductId, WorkProduct>) {
        let ongoing = *ongoing.downcast::<Ongoing>().expect("OxideBackend's own Ongoing");
        let (mut modules, work_products) = self.llvm.join_codegen(ongoing.host, sess, outputs, crate_info);
        if let Some(pending) = ongoing.device {
            let device = match pending.join() {
                Ok(device) => device,
                Err(message) => sess.dcx().fatal(message),
            };
            match device.into_compiled_module(outputs) {
                Ok(module) => modules.modules.push(module),
                Err(e) => sess.dcx().fatal(format!("cuda-oxide: could not write the device bundle: {e}")),
            }
        }
        (modules, work_products)
    }

    fn print_pass_timings(&self) {
        self.llvm.print_pass_timings()
    }
    fn print_statistics(&self) {
        self.llvm.print_statistics()
    }
    fn print_statistics_json(&self) -> String {
        self.llvm.print_statistics_json()
    }
    fn link(
        &self,
        sess: &Session,
        modules: CompiledModules,
        crate_info: CrateInfo,
        metadata: EncodedMetadata,
        outputs: &OutputFilenames,
    ) {
        self.llvm.link(sess, modules, crate_info, metadata, outputs)
    }
}
