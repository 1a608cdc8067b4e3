//! `gpu_printf!`: CUDA's `vprintf` with a format string checked at compile time, in either
//! spelling: C's (`"%u %f\n"`) or Rust's (`"{} {:.3}\n"`, as NVIDIA's cuda-oxide writes it).
//!
//! The macro reads the format here, so that a wrong format is an error at the literal, and an
//! argument of the wrong type an error at that argument. A Rust-style placeholder's C conversion
//! depends on the argument's type (`%u` for `u32`, `%ld` for `i64`, `%s` with `true`/`false` for
//! `bool`): it is chosen at compile time by `cuda_device::debug::rust_spec` from the type.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, LitStr, Token};

/// `gpu_printf!(format, args…)`; an argument may be named (`name = expr`), as in `format!`.
pub struct PrintfInput {
    format: LitStr,
    args: Vec<Expr>,
    /// The name of each argument of `args` given as `name = expr`.
    names: Vec<Option<syn::Ident>>,
    /// How many arguments the caller wrote; those after them are identifiers a Rust-style
    /// format captured (`{x}` with no argument named `x`).
    explicit: usize,
}

/// One argument: `expr` or `name = expr`.
struct Arg {
    name: Option<syn::Ident>,
    expr: Expr,
}

impl Parse for Arg {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let name = if input.peek(syn::Ident) && input.peek2(Token![=]) && !input.peek2(Token![==]) {
            let name: syn::Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            Some(name)
        } else {
            None
        };
        Ok(Arg { name, expr: input.parse()? })
    }
}

impl Parse for PrintfInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let format: LitStr = input.parse().map_err(|e| {
            syn::Error::new(e.span(), "gpu_printf! takes a format string literal first, then the arguments")
        })?;
        let mut parsed = Vec::new();
        if input.parse::<Option<Token![,]>>()?.is_some() {
            parsed = Punctuated::<Arg, Token![,]>::parse_terminated(input)?.into_iter().collect();
        }
        let mut seen_named = false;
        for a in &parsed {
            match &a.name {
                Some(_) => seen_named = true,
                None if seen_named => {
                    return Err(syn::Error::new(
                        a.expr.span(),
                        "gpu_printf!: positional arguments cannot follow named arguments",
                    ));
                }
                None => {}
            }
        }
        let explicit = parsed.len();
        let (names, args) = parsed.into_iter().map(|a| (a.name, a.expr)).unzip();
        Ok(PrintfInput { format, args, names, explicit })
    }
}

/// Conversion classes of a C format (the numbers of `cuda_device::debug::kind`).
mod class {
    pub const INT: u8 = 0;
    pub const LONG: u8 = 1;
    pub const FLOAT: u8 = 2;
    pub const STR: u8 = 3;
    pub const PTR: u8 = 4;
}

pub fn expand(mut input: PrintfInput) -> syn::Result<TokenStream> {
    let text = input.format.value();
    if is_rust_format(&text) {
        rust_format(&mut input, &text)
    } else {
        if let Some(name) = input.names.iter().flatten().next() {
            return Err(syn::Error::new(
                name.span(),
                "gpu_printf!: a C format (`%d`) takes its arguments by position; named arguments need Rust's `{name}`",
            ));
        }
        c_format(&input, &text)
    }
}

/// A Rust-style format has a `{…}` placeholder (`{{` is a literal brace).
fn is_rust_format(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'{' {
            if b.get(i + 1) == Some(&b'{') {
                i += 2;
                continue;
            }
            return true;
        }
        i += 1;
    }
    false
}

fn error(lit: &LitStr, message: impl std::fmt::Display) -> syn::Error {
    syn::Error::new(lit.span(), format!("gpu_printf!: {message}"))
}

/// The class of each conversion of a C format.
fn c_conversions(lit: &LitStr, text: &str) -> syn::Result<Vec<(u8, String)>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        if b.get(i) == Some(&b'%') {
            i += 1;
            continue;
        }
        while i < b.len() && matches!(b[i], b'-' | b'+' | b' ' | b'#' | b'0'..=b'9' | b'.') {
            i += 1;
        }
        if b.get(i) == Some(&b'*') {
            return Err(error(lit, "`*` widths are not supported; write the width into the format string"));
        }
        let mut long = false;
        while i < b.len() && matches!(b[i], b'l' | b'h' | b'z' | b'j' | b't' | b'L') {
            long |= matches!(b[i], b'l' | b'z' | b'j' | b't');
            i += 1;
        }
        let Some(&c) = b.get(i) else {
            return Err(error(lit, "the format string ends in the middle of a conversion"));
        };
        let k = match c {
            b'd' | b'i' | b'u' | b'x' | b'X' | b'o' | b'c' if long => class::LONG,
            b'd' | b'i' | b'u' | b'x' | b'X' | b'o' | b'c' => class::INT,
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => class::FLOAT,
            b's' => class::STR,
            b'p' => class::PTR,
            _ => {
                return Err(error(
                    lit,
                    format!(
                        "unknown conversion `{}` (use %d %u %x %ld %lu %f %e %g %s %p %c %%, or Rust's {{}} placeholders)",
                        &text[start..=i]
                    ),
                ));
            }
        };
        out.push((k, text[start..=i].to_string()));
        i += 1;
    }
    Ok(out)
}

fn arity_error(lit: &LitStr, what: &str, conversions: usize, args: usize) -> syn::Error {
    let args = if args == 1 { "1 argument follows".to_string() } else { format!("{args} arguments follow") };
    error(lit, format!("the format has {conversions} {what}, but {args}"))
}

/// C format: each argument must fit its conversion (checked by a trait bound at the argument).
fn c_format(input: &PrintfInput, text: &str) -> syn::Result<TokenStream> {
    let conversions = c_conversions(&input.format, text)?;
    if conversions.len() != input.args.len() {
        return Err(arity_error(&input.format, "conversions", conversions.len(), input.args.len()));
    }
    let lit = &input.format;
    let n = input.args.len();
    // The buffer's name keeps the call site's hygiene; only the call is spanned at the argument.
    let buffer = syn::Ident::new("__args", Span::call_site());
    let pushes = input.args.iter().zip(&conversions).map(
        |(arg, (k, _))| quote_spanned!(arg.span()=> ::cuda_device::debug::push_c::<_, #k, #n>(&mut #buffer, #arg);),
    );
    Ok(quote! {{
        let mut __args = ::cuda_device::debug::PrintfArgs::<#n>::new();
        #(#pushes)*
        ::cuda_device::debug::vprintf(::core::concat!(#lit, "\0"), __args.as_ptr())
    }})
}

/// One `{…}` of a Rust-style format, turned into the parts of its C conversion.
#[derive(Debug)]
struct Placeholder {
    arg: usize,
    /// C flags: `-`, `+`, `#`, `0`.
    flags: String,
    width: u32,
    /// `u32::MAX` when none.
    precision: u32,
    /// `b'?'` for `{}` and `{:?}`, else the type character (`x X o e E f g G p`).
    ty: u8,
}

/// The arguments a Rust-style format can refer to: by position, by name, or (an identifier no
/// argument is named) by capturing that identifier, which appends it.
struct ArgNames<'a> {
    names: &'a mut Vec<Option<syn::Ident>>,
    /// Identifiers captured so far, in order (their index is `names.len()` when appended).
    captured: Vec<syn::Ident>,
}

impl ArgNames<'_> {
    fn len(&self) -> usize {
        self.names.len()
    }

    /// The index of the argument named `name`, capturing `name` from the caller's scope when no
    /// argument has that name (`span`: where the captured identifier resolves).
    fn resolve(&mut self, name: &str, span: Span) -> usize {
        if let Some(i) = self.names.iter().position(|n| n.as_ref().is_some_and(|n| n == name)) {
            return i;
        }
        let ident = syn::Ident::new(name, span);
        self.names.push(Some(ident.clone()));
        self.captured.push(ident);
        self.names.len() - 1
    }
}

/// Splits a Rust-style format into literal pieces (with `%` escaped for C) and placeholders;
/// `pieces.len() == placeholders.len() + 1`.
fn rust_pieces(lit: &LitStr, text: &str, args: &mut ArgNames<'_>) -> syn::Result<(Vec<String>, Vec<Placeholder>)> {
    let mut pieces = vec![String::new()];
    let mut holders = Vec::new();
    let mut next_arg = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                pieces.last_mut().expect("a piece").push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                pieces.last_mut().expect("a piece").push('}');
            }
            '}' => return Err(error(lit, "unmatched `}` in the format string (write `}}` for a brace)")),
            '%' => pieces.last_mut().expect("a piece").push_str("%%"),
            '{' => {
                let mut inner = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => inner.push(c),
                        None => return Err(error(lit, "unclosed `{` in the format string (write `{{` for a brace)")),
                    }
                }
                holders.push(placeholder(lit, &inner, &mut next_arg, args)?);
                pieces.push(String::new());
            }
            c => pieces.last_mut().expect("a piece").push(c),
        }
    }
    Ok((pieces, holders))
}

fn placeholder(lit: &LitStr, inner: &str, next_arg: &mut usize, names: &mut ArgNames<'_>) -> syn::Result<Placeholder> {
    let (position, spec) = inner.split_once(':').unwrap_or((inner, ""));
    let position = position.trim();
    let arg = if position.is_empty() {
        *next_arg += 1;
        *next_arg - 1
    } else if let Ok(i) = position.parse::<usize>() {
        i
    } else if syn::parse_str::<syn::Ident>(position).is_ok() {
        names.resolve(position, lit.span())
    } else {
        return Err(error(lit, format!("`{{{inner}}}`: `{position}` is neither a position nor an identifier")));
    };
    let args = names.len();
    if arg >= args {
        return Err(error(
            lit,
            format!(
                "`{{{inner}}}` refers to argument {arg}, but there {} {args}",
                if args == 1 { "is" } else { "are" }
            ),
        ));
    }
    let bad = |why: &str| error(lit, format!("`{{{inner}}}`: {why}"));
    let mut s = spec;
    let mut flags = String::new();
    // [[fill]align]: only `<` (left) and `>` (right, C's default), filled with spaces.
    let mut rest: Vec<char> = s.chars().collect();
    if rest.len() >= 2 && matches!(rest[1], '<' | '>' | '^') {
        if rest[0] != ' ' {
            return Err(bad("fill characters other than a space are not supported on the device"));
        }
        rest.remove(0);
    }
    let text: String = rest.into_iter().collect();
    s = &text;
    match s.chars().next() {
        Some('<') => {
            flags.push('-');
            s = &s[1..];
        }
        Some('>') => s = &s[1..],
        Some('^') => return Err(bad("centred alignment is not supported on the device")),
        _ => {}
    }
    // Sign: `+` as in Rust. Rust accepts and ignores `-`; NVIDIA's gpu_printf! gives it C's
    // meaning (left-justify, `{:-8}`), and so do we. A space (`{: }`, C's `% d`: a blank before
    // positive numbers) is not Rust syntax but NVIDIA's accepts it.
    if let Some(r) = s.strip_prefix('+') {
        flags.push('+');
        s = r;
    } else if let Some(r) = s.strip_prefix('-') {
        if !flags.contains('-') {
            flags.push('-');
        }
        s = r;
    } else if let Some(r) = s.strip_prefix(' ') {
        flags.push(' ');
        s = r;
    }
    if let Some(r) = s.strip_prefix('#') {
        flags.push('#');
        s = r;
    }
    if let Some(r) = s.strip_prefix('0') {
        flags.push('0');
        s = r;
    }
    let digits = |s: &str| s.chars().take_while(char::is_ascii_digit).count();
    let w = digits(s);
    let width = if w > 0 { s[..w].parse().map_err(|_| bad("width too large"))? } else { 0 };
    s = &s[w..];
    if s.contains('$') || s.contains(".*") {
        // C's `*` would need an `int` argument pushed before the value; not worth the surprise.
        return Err(bad(
            "widths and precisions from arguments (`N$`, `name$`, `.*`) are not supported on the device; \
             write the number into the format",
        ));
    }
    let mut precision = u32::MAX;
    if let Some(r) = s.strip_prefix('.') {
        let p = digits(r);
        if p == 0 {
            return Err(bad("a `.` must be followed by the precision"));
        }
        precision = r[..p].parse().map_err(|_| bad("precision too large"))?;
        s = &r[p..];
    }
    let ty = match s {
        "" | "?" => b'?',
        "x" | "X" | "o" | "e" | "E" | "f" | "g" | "G" | "p" => s.as_bytes()[0],
        "b" => return Err(bad("binary (`{:b}`) is not supported by the device's printf; use `{:x}`")),
        other => {
            return Err(bad(&format!(
                "unknown format type `{other}` (use {{}} {{:x}} {{:X}} {{:o}} {{:e}} {{:.N}} {{:p}})"
            )));
        }
    };
    Ok(Placeholder { arg, flags, width, precision, ty })
}

/// Rust-style format: the C format is assembled at compile time from the argument types.
fn rust_format(input: &mut PrintfInput, text: &str) -> syn::Result<TokenStream> {
    let lit = input.format.clone();
    let mut names = ArgNames { names: &mut input.names, captured: Vec::new() };
    let (pieces, holders) = rust_pieces(&lit, text, &mut names)?;
    let captured = std::mem::take(&mut names.captured);
    input.args.extend(captured.into_iter().map(|ident| -> Expr { syn::parse_quote!(#ident) }));
    let used: std::collections::BTreeSet<usize> = holders.iter().map(|h| h.arg).collect();
    if let Some(unused) = (0..input.explicit).find(|i| !used.contains(i)) {
        return Err(syn::Error::new(
            input.args[unused].span(),
            "gpu_printf!: this argument is never used by the format",
        ));
    }
    let n_args = input.args.len();
    let values: Vec<syn::Ident> = (0..n_args).map(|i| quote::format_ident!("__a{}", i)).collect();
    let types: Vec<syn::Ident> = (0..n_args).map(|i| quote::format_ident!("__T{}", i)).collect();
    let checks = input.args.iter().zip(&values).map(|(arg, v)| {
        // The bound is checked here, at the argument: a type printf cannot print is an error there.
        quote_spanned!(arg.span()=> let #v = ::cuda_device::debug::printable(#arg);)
    });
    let specs = holders.iter().map(|h| {
        let t = &types[h.arg];
        let (flags, width, precision, ty) = (&h.flags, h.width, h.precision, h.ty);
        quote!(::cuda_device::debug::rust_spec::<#t>(#flags, #width, #precision, #ty))
    });
    let pushes = holders.iter().map(|h| {
        let v = &values[h.arg];
        quote!(::cuda_device::debug::PrintfArg::push_rust(#v, &mut __args);)
    });
    let slots = holders.len();
    let capacity = pieces.iter().map(String::len).sum::<usize>() + 24 * holders.len() + 1;
    let span = Span::call_site();
    Ok(quote_spanned! {span=> {
        #(#checks)*
        struct __Format<#(#types),*>(::core::marker::PhantomData<(#(#types,)*)>);
        impl<#(#types: ::cuda_device::debug::PrintfArg),*> __Format<#(#types),*> {
            const C: [u8; #capacity] = ::cuda_device::debug::assemble::<#capacity>(&[#(#pieces),*], &[#(#specs),*]);
        }
        fn __format<#(#types: ::cuda_device::debug::PrintfArg),*>(#(_: &#types),*) -> &'static [u8; #capacity] {
            &__Format::<#(#types),*>::C
        }
        let mut __args = ::cuda_device::debug::PrintfArgs::<#slots>::new();
        #(#pushes)*
        ::cuda_device::debug::vprintf_bytes(__format(#(&#values),*), __args.as_ptr())
    }})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> LitStr {
        LitStr::new(s, Span::call_site())
    }

    #[test]
    fn modes() {
        assert!(is_rust_format("x = {}\n"));
        assert!(!is_rust_format("x = %d {{literal}}\n"));
        assert!(!is_rust_format("no conversions"));
    }

    #[test]
    fn c_conversions_and_errors() {
        let l = lit("");
        let c = c_conversions(&l, "%u %ld %5.2f %s %p %% %c").unwrap();
        let classes: Vec<u8> = c.iter().map(|(k, _)| *k).collect();
        assert_eq!(classes, [class::INT, class::LONG, class::FLOAT, class::STR, class::PTR, class::INT]);
        assert!(c_conversions(&l, "%q").unwrap_err().to_string().contains("unknown conversion `%q`"));
        assert!(c_conversions(&l, "%*d").is_err());
    }

    #[test]
    fn rust_placeholders() {
        let l = lit("");
        let pieces = |text: &str, n: usize| {
            let mut names = vec![None; n];
            let mut args = ArgNames { names: &mut names, captured: Vec::new() };
            rust_pieces(&l, text, &mut args)
        };
        let (p, h) = pieces("a {} b {:#08.3x} c {1:<5} 100% {{}}", 2).unwrap();
        assert_eq!(p, ["a ", " b ", " c ", " 100%% {}"]);
        assert_eq!((h[0].arg, h[0].ty), (0, b'?'));
        assert_eq!((h[1].arg, h[1].flags.as_str(), h[1].width, h[1].precision, h[1].ty), (1, "#0", 8, 3, b'x'));
        assert_eq!((h[2].arg, h[2].flags.as_str(), h[2].width), (1, "-", 5));
        assert!(pieces("{} {}", 1).unwrap_err().to_string().contains("refers to argument 1"));
        assert!(pieces("{:b}", 1).unwrap_err().to_string().contains("binary"));
        assert!(pieces("{", 1).unwrap_err().to_string().contains("unclosed"));
        assert!(pieces("{:1$}", 2).unwrap_err().to_string().contains("from arguments"));
        assert!(pieces("{:.*}", 2).unwrap_err().to_string().contains("from arguments"));
        assert!(pieces("{:^5}", 1).unwrap_err().to_string().contains("centred"));
    }

    #[test]
    fn rust_sign_flags_as_nvidia_spells_them() {
        let l = lit("");
        let one = |text: &str| {
            let mut names = vec![None];
            let mut args = ArgNames { names: &mut names, captured: Vec::new() };
            let (_, h) = rust_pieces(&l, text, &mut args).unwrap();
            (h[0].flags.clone(), h[0].width, h[0].precision)
        };
        assert_eq!(one("{:+}"), ("+".to_string(), 0, u32::MAX));
        assert_eq!(one("{: }"), (" ".to_string(), 0, u32::MAX));
        assert_eq!(one("{:-8}"), ("-".to_string(), 8, u32::MAX));
        assert_eq!(one("{:08}"), ("0".to_string(), 8, u32::MAX));
        assert_eq!(one("{:>8.3}"), (String::new(), 8, 3));
        assert_eq!(one("{: <6}"), ("-".to_string(), 6, u32::MAX));
        assert_eq!(one("{:#x}").0, "#");
    }

    #[test]
    fn named_and_captured_arguments() {
        let l = lit("");
        let mut names = vec![None, Some(syn::Ident::new("w", Span::call_site()))];
        let mut args = ArgNames { names: &mut names, captured: Vec::new() };
        let (_, h) = rust_pieces(&l, "{} {w} {x} {w} {x}", &mut args).unwrap();
        let idx: Vec<usize> = h.iter().map(|h| h.arg).collect();
        // `w` is the named argument; `x` is captured once, as a third argument.
        assert_eq!(idx, [0, 1, 2, 1, 2]);
        assert_eq!(args.captured.iter().map(|i| i.to_string()).collect::<Vec<_>>(), ["x"]);
        assert!(rust_pieces(&l, "{1x}", &mut args).unwrap_err().to_string().contains("neither a position"));
    }
}
