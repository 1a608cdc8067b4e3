//! `ptx_asm!`: inline PTX in device code, with CUDA C++'s operand syntax (`%0`, `"=r"`, `"+l"`).
//!
//! The macro checks the syntax here, where it can point at the user's tokens, and records the
//! statement in a per-call-site type (`cuda_device::inline_ptx::PtxAsmSite`) whose constants the
//! device compiler reads when it gives `cuda_device::intrinsics::ptx_asm::<Site, In, Out>` its
//! body: an LLVM `asm` call with the operands loaded from `In` and stored to `Out`. The template
//! and constraints stay in the user's form; the backend owns their translation to LLVM's.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, LitStr, Token, parenthesized};

/// Register constraints an `out`/`inout` operand may use (after `=`/`+`).
const REGISTERS: &[char] = &['h', 'r', 'l', 'q', 'f', 'd'];

enum Operand {
    Out { class: char, place: Expr },
    InOut { class: char, place: Expr },
    In { class: char, value: Expr },
}

struct Input {
    template: LitStr,
    operands: Vec<Operand>,
    memory: bool,
    register_only: bool,
    may_diverge: bool,
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let template: LitStr = input.parse()?;
        let mut parsed =
            Input { template, operands: Vec::new(), memory: false, register_only: false, may_diverge: false };
        let mut options_span = None;
        let mut clobber_span = None;
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let kind: Ident = if input.peek(Token![in]) {
                let t: Token![in] = input.parse()?;
                Ident::new("in", t.span)
            } else {
                input.parse()?
            };
            let content;
            parenthesized!(content in input);
            match kind.to_string().as_str() {
                "options" => {
                    options_span = Some(kind.span());
                    let names = content.parse_terminated(Ident::parse, Token![,])?;
                    for name in names {
                        match name.to_string().as_str() {
                            "register_only" => parsed.register_only = true,
                            "may_diverge" => parsed.may_diverge = true,
                            other => {
                                return Err(syn::Error::new(
                                    name.span(),
                                    format!(
                                        "unknown ptx_asm! option `{other}`; expected `register_only` or `may_diverge`"
                                    ),
                                ));
                            }
                        }
                    }
                }
                "clobber" => {
                    let what: LitStr = content.parse()?;
                    if what.value() != "memory" {
                        return Err(syn::Error::new(
                            what.span(),
                            format!(
                                "unsupported clobber `{}`; ptx_asm! knows only `clobber(\"memory\")`",
                                what.value()
                            ),
                        ));
                    }
                    clobber_span = Some(what.span());
                    parsed.memory = true;
                }
                op @ ("out" | "inout" | "in") => {
                    let constraint: LitStr = content.parse()?;
                    let expr: Expr = input.parse()?;
                    let operand = parse_operand(op, &constraint, expr)?;
                    if !matches!(operand, Operand::In { .. })
                        && parsed.operands.iter().any(|o| matches!(o, Operand::In { .. }))
                    {
                        return Err(syn::Error::new(
                            kind.span(),
                            "ptx_asm! outputs (`out`, `inout`) must come before the inputs (`in`)",
                        ));
                    }
                    parsed.operands.push(operand);
                }
                other => {
                    return Err(syn::Error::new(
                        kind.span(),
                        format!(
                            "unknown ptx_asm! argument `{other}`; expected `out`, `inout`, `in`, `clobber` or `options`"
                        ),
                    ));
                }
            }
        }
        let has_output = parsed.operands.iter().any(|o| !matches!(o, Operand::In { .. }));
        if parsed.register_only && !has_output {
            return Err(syn::Error::new(
                parsed.template.span(),
                "`options(register_only)` requires an `out` or `inout` operand",
            ));
        }
        if let (true, Some(span)) = (parsed.register_only, clobber_span) {
            return Err(syn::Error::new(
                span,
                "`options(register_only)` promises no memory access: drop `clobber(\"memory\")`",
            ));
        }
        if parsed.may_diverge && !parsed.register_only {
            return Err(syn::Error::new(
                options_span.unwrap_or_else(Span::call_site),
                "`may_diverge` requires `register_only`: only a pure register computation may move across control flow",
            ));
        }
        Ok(parsed)
    }
}

fn parse_operand(kind: &str, constraint: &LitStr, expr: Expr) -> syn::Result<Operand> {
    let text = constraint.value();
    let reg = |prefix: &str| -> syn::Result<char> {
        let mut chars = text.strip_prefix(prefix).unwrap_or("").chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if REGISTERS.contains(&c) => Ok(c),
            _ => Err(syn::Error::new(
                constraint.span(),
                format!(
                    "unsupported `{kind}` constraint `{text}`; expected one of {}",
                    REGISTERS.iter().map(|c| format!("\"{prefix}{c}\"")).collect::<Vec<_>>().join(", ")
                ),
            )),
        }
    };
    Ok(match kind {
        "out" => Operand::Out { class: reg("=")?, place: expr },
        "inout" => Operand::InOut { class: reg("+")?, place: expr },
        _ => {
            let class = match text.as_str() {
                "C" => 'C',
                "n" => 'n',
                _ => reg("").map_err(|_| {
                    syn::Error::new(
                        constraint.span(),
                        format!(
                            "unsupported `in` constraint `{text}`; expected one of \"h\", \"r\", \"l\", \"q\", \"f\", \"d\", \"n\", \"C\""
                        ),
                    )
                })?,
            };
            Operand::In { class, value: expr }
        }
    })
}

/// Checks the template's `%` uses: `%%` (a literal `%`) or `%N` with `N` an operand.
fn check_template(template: &LitStr, operands: usize) -> syn::Result<()> {
    let text = template.value();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            i += 1;
            continue;
        }
        let rest = &text[i + 1..];
        if rest.starts_with('%') {
            i += 2;
            continue;
        }
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if digits.is_empty() {
            let word: String =
                rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.').collect();
            return Err(syn::Error::new(
                template.span(),
                format!("literal PTX register `%{word}` must be escaped as `%%{word}` in ptx_asm!"),
            ));
        }
        let n: usize = digits.parse().unwrap_or(usize::MAX);
        if n >= operands {
            return Err(syn::Error::new(
                template.span(),
                format!("ptx_asm! template refers to `%{digits}`, but there are only {operands} operands"),
            ));
        }
        i += 1 + digits.len();
    }
    Ok(())
}

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let input: Input = syn::parse2(input)?;
    check_template(&input.template, input.operands.len())?;
    let site = Ident::new("__OxidePtxAsmSite", Span::mixed_site());
    let template = &input.template;
    let classes: Vec<String> = input
        .operands
        .iter()
        .map(|o| match o {
            Operand::Out { class, .. } => format!("={class}"),
            Operand::InOut { class, .. } => format!("+{class}"),
            Operand::In { class, .. } => class.to_string(),
        })
        .collect();
    let classes = classes.join(",");
    let mut options = Vec::new();
    if input.register_only {
        options.push("register_only");
    }
    if input.may_diverge {
        options.push("may_diverge");
    }
    if input.memory {
        options.push("memory");
    }
    let options = options.join(",");

    let mut consts = TokenStream::new();
    let mut ins = Vec::new();
    let mut tied = Vec::new();
    let mut outs = Vec::new();
    for (k, operand) in input.operands.iter().enumerate() {
        match operand {
            Operand::In { class: 'C', value } => consts.extend(quote! {
                impl ::cuda_device::inline_ptx::PtxAsmConst<#k> for #site {
                    const BYTES: &'static [u8] = #value;
                }
            }),
            Operand::In { class: 'n', value } => consts.extend(quote! {
                impl ::cuda_device::inline_ptx::PtxAsmConst<#k> for #site {
                    const VALUE: i64 = (#value) as i64;
                }
            }),
            Operand::In { value, .. } => ins.push(value.clone()),
            Operand::InOut { place, .. } => {
                tied.push(place.clone());
                outs.push(place.clone());
            }
            Operand::Out { place, .. } => outs.push(place.clone()),
        }
    }
    // Register inputs in LLVM's order: the explicit ones, then the initial values of `inout`s.
    ins.extend(tied);
    let in_vals = format_ident!("__oxide_ptx_in", span = Span::mixed_site());
    let out_vals = format_ident!("__oxide_ptx_out", span = Span::mixed_site());
    let names: Vec<Ident> =
        (0..outs.len()).map(|i| format_ident!("__oxide_ptx_out_{}", i, span = Span::mixed_site())).collect();
    let (out_decl, out_ptr, write_back) = if outs.is_empty() {
        (quote!(), quote!(::core::ptr::null_mut::<()>()), quote!())
    } else {
        (
            quote!(let mut #out_vals = ::core::mem::MaybeUninit::uninit();),
            quote!(#out_vals.as_mut_ptr()),
            quote! {
                let (#(#names,)*) = #out_vals.assume_init();
                #(#outs = #names;)*
            },
        )
    };
    Ok(quote! {{
        #[allow(dead_code, non_camel_case_types)]
        struct #site;
        impl ::cuda_device::inline_ptx::PtxAsmSite for #site {
            const TEMPLATE: &'static str = #template;
            const OPERANDS: &'static str = #classes;
            const OPTIONS: &'static str = #options;
        }
        #consts
        let #in_vals = (#(#ins,)*);
        #out_decl
        ::cuda_device::intrinsics::ptx_asm::<#site, _, _>(&#in_vals, #out_ptr);
        #write_back
    }})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(input: TokenStream) -> String {
        expand(input).expect_err("must be refused").to_string()
    }

    #[test]
    fn records_template_constraints_and_options() {
        let out = expand(quote! {
            "add.u32 %0, %1, %2; // %%laneid", out("=r") y, inout("+l") z, in("r") x, in("C") MODE, options(register_only)
        })
        .unwrap()
        .to_string();
        assert!(out.contains(r#"const OPERANDS : & 'static str = "=r,+l,r,C""#), "{out}");
        assert!(out.contains(r#"const OPTIONS : & 'static str = "register_only""#), "{out}");
        assert!(out.contains("PtxAsmConst < 3usize >") && out.contains("const BYTES"), "{out}");
        // Register inputs: the explicit one, then the inout's initial value.
        assert!(out.contains("= (x , z ,)"), "{out}");
        assert!(out.contains("y = ") && out.contains("z = "), "{out}");
    }

    #[test]
    fn refuses_what_ptx_cannot_take() {
        assert!(error(quote!("mov.u32 %0, %tid.x;", out("=r") y)).contains("`%tid.x` must be escaped as `%%tid.x`"));
        assert!(error(quote!("mov.u32 %0, %2;", out("=r") y, in("r") x)).contains("only 2 operands"));
        assert!(error(quote!("mov.u32 %0, %1;", out("r") y, in("r") x)).contains("unsupported `out` constraint `r`"));
        assert!(error(quote!("mov.u32 %0, %1;", inout("=r") y, in("r") x)).contains("unsupported `inout` constraint"));
        assert!(error(quote!("membar.gl;", options(register_only))).contains("requires an `out` or `inout`"));
        assert!(
            error(quote!("mov.u32 %0, 1;", out("=r") y, clobber("memory"), options(register_only)))
                .contains("drop `clobber(\"memory\")`")
        );
        assert!(
            error(quote!("mov.u32 %0, 1;", out("=r") y, options(may_diverge))).contains("requires `register_only`")
        );
        assert!(error(quote!("nop;", clobber("cc"))).contains("unsupported clobber `cc`"));
        assert!(error(quote!("nop;", options(pure))).contains("unknown ptx_asm! option `pure`"));
    }
}
