//! Types for full debug information: enough for `cuda-gdb` to print a variable. Scalars,
//! pointers and references, slices as `{ data_ptr, length }` (the shape rustc gives them, which
//! gdb's Rust support prints as a slice), arrays, structs, tuples and closures with their fields;
//! anything else (enums, unions, trait objects) as an opaque type of the right size.

use rustc_abi::{BackendRepr, FieldIdx, FieldsShape};
use rustc_codegen_ssa::debuginfo::type_names;
use rustc_middle::ty::layout::{LayoutOf, TyAndLayout};
use rustc_middle::ty::{self, Ty};

use super::meta_string;
use crate::lower::context::CodegenCx;
use crate::lower::ir::Meta;

impl<'tcx> CodegenCx<'tcx> {
    /// The `DIType` of `ty`, made once per type.
    pub(super) fn debug_type(&self, ty: Ty<'tcx>) -> Meta {
        let debug = self.debug.as_ref().expect("types only with debug information");
        if let Some(&m) = debug.types.borrow().get(&ty) {
            return m;
        }
        let layout = self.layout_of(ty);
        let name = type_names::compute_debuginfo_type_name(self.tcx, ty, true);
        let (size, align) = (layout.size.bits(), layout.align.abi.bits());
        let basic = |encoding: &str| {
            self.meta(format!("!DIBasicType(name: {}, size: {size}, encoding: {encoding})", meta_string(&name)))
        };
        let m = match ty.kind() {
            ty::Bool => basic("DW_ATE_boolean"),
            ty::Char => basic("DW_ATE_UTF"),
            ty::Int(_) => basic("DW_ATE_signed"),
            ty::Uint(_) => basic("DW_ATE_unsigned"),
            ty::Float(_) => basic("DW_ATE_float"),
            ty::Never => basic("DW_ATE_unsigned"),
            ty::Tuple(fields) if fields.is_empty() => basic("DW_ATE_unsigned"),
            ty::Ref(_, pointee, _) | ty::RawPtr(pointee, _) => match layout.backend_repr {
                BackendRepr::ScalarPair(..) => self.fat_pointer_type(ty, *pointee, &name, layout),
                _ => {
                    let base = self.debug_type(*pointee);
                    self.meta(format!(
                        "!DIDerivedType(tag: DW_TAG_pointer_type, name: {}, baseType: {base}, size: {size}, align: {align})",
                        meta_string(&name)
                    ))
                }
            },
            ty::Array(elem, _) => {
                let base = self.debug_type(*elem);
                let count = match layout.fields {
                    FieldsShape::Array { count, .. } => count,
                    _ => 0,
                };
                self.meta(format!(
                    "!DICompositeType(tag: DW_TAG_array_type, baseType: {base}, size: {size}, align: {align}, \
                     elements: !{{!DISubrange(count: {count})}})"
                ))
            }
            // Fields by name where the layout has exactly the declared fields (not SIMD types,
            // whose layout is an array of lanes); else opaque, never a wrong description.
            ty::Adt(def, _)
                if def.is_struct()
                    && matches!(layout.fields, FieldsShape::Arbitrary { .. })
                    && def.non_enum_variant().fields.len() == layout.fields.count() =>
            {
                let variant = def.non_enum_variant();
                let names: Vec<String> = (0..layout.fields.count())
                    .map(|i| variant.fields[FieldIdx::from_usize(i)].name.to_string())
                    .collect();
                self.struct_type(ty, &name, layout, &names)
            }
            ty::Tuple(_) | ty::Closure(..) if matches!(layout.fields, FieldsShape::Arbitrary { .. }) => {
                let names: Vec<String> = (0..layout.fields.count()).map(|i| format!("__{i}")).collect();
                self.struct_type(ty, &name, layout, &names)
            }
            _ => self.struct_type(ty, &name, layout, &[]),
        };
        debug.types.borrow_mut().insert(ty, m);
        m
    }

    /// A struct with the given fields of `layout` (none: an opaque type of the right size). The
    /// node is made before its fields, so a field may point back at the struct.
    fn struct_type(&self, ty: Ty<'tcx>, name: &str, layout: TyAndLayout<'tcx>, fields: &[String]) -> Meta {
        let node = self.module.borrow_mut().meta_distinct(String::new());
        self.debug.as_ref().expect("debug information").types.borrow_mut().insert(ty, node);
        let members: Vec<String> = fields
            .iter()
            .enumerate()
            .map(|(i, field)| {
                let field_layout = layout.field(self, i);
                let base = self.debug_type(field_layout.ty);
                self.member(node, field, base, field_layout, layout.fields.offset(i).bits()).to_string()
            })
            .collect();
        self.module.borrow_mut().set_meta(
            node,
            format!(
                "distinct !DICompositeType(tag: DW_TAG_structure_type, name: {}, size: {}, align: {}, elements: !{{{}}})",
                meta_string(name),
                layout.size.bits(),
                layout.align.abi.bits(),
                members.join(", ")
            ),
        );
        node
    }

    fn member(&self, scope: Meta, name: &str, base: Meta, layout: TyAndLayout<'tcx>, offset_bits: u64) -> Meta {
        self.meta(format!(
            "!DIDerivedType(tag: DW_TAG_member, name: {}, scope: {scope}, baseType: {base}, size: {}, align: {}, offset: {offset_bits})",
            meta_string(name),
            layout.size.bits(),
            layout.align.abi.bits()
        ))
    }

    /// `&[T]`, `&str` (`data_ptr`, `length`) and `&dyn Trait` (`pointer`, `vtable`), named and
    /// laid out as rustc's own debug information has them.
    fn fat_pointer_type(&self, ty: Ty<'tcx>, pointee: Ty<'tcx>, name: &str, layout: TyAndLayout<'tcx>) -> Meta {
        let tcx = self.tcx;
        let (data_name, meta_name, data_target) = match pointee.kind() {
            ty::Slice(elem) => ("data_ptr", "length", *elem),
            ty::Str => ("data_ptr", "length", tcx.types.u8),
            _ => ("pointer", "vtable", tcx.types.u8),
        };
        let node = self.module.borrow_mut().meta_distinct(String::new());
        self.debug.as_ref().expect("debug information").types.borrow_mut().insert(ty, node);
        let data_ty = Ty::new_imm_ptr(tcx, data_target);
        let meta_ty = if meta_name == "length" { tcx.types.usize } else { Ty::new_imm_ptr(tcx, tcx.types.usize) };
        let data_layout = self.layout_of(data_ty);
        let meta_layout = self.layout_of(meta_ty);
        let data = self.member(node, data_name, self.debug_type(data_ty), data_layout, 0);
        let meta_offset = data_layout.size.align_to(meta_layout.align.abi).bits();
        let meta = self.member(node, meta_name, self.debug_type(meta_ty), meta_layout, meta_offset);
        self.module.borrow_mut().set_meta(
            node,
            format!(
                "distinct !DICompositeType(tag: DW_TAG_structure_type, name: {}, size: {}, align: {}, elements: !{{{data}, {meta}}})",
                meta_string(name),
                layout.size.bits(),
                layout.align.abi.bits()
            ),
        );
        node
    }
}
