//! Parsing and checking the arguments of `#[launch_bounds]` / `#[cluster_launch]`, and emitting tool attributes.

use oxide_contract::attrs;
use oxide_contract::limits::{MAX_CLUSTER_SIZE, MAX_PORTABLE_CLUSTER_SIZE, MAX_THREADS_PER_BLOCK};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Lit, Token};

/// Our attributes, recognised by the last segment of their path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Kernel,
    Device,
    LaunchBounds,
    ClusterLaunch,
    CooperativeLaunch,
    LaunchContract,
}

impl Marker {
    pub fn of(attr: &Attribute) -> Option<Marker> {
        // `oxide::launch_bounds(..)` is the tool attribute a marker became (its `cfg_attr` is
        // expanded before later attribute macros run), not the marker.
        if attr.path().segments.first().is_some_and(|s| s.ident == attrs::TOOL) {
            return None;
        }
        let last = attr.path().segments.last()?;
        let name = last.ident.to_string();
        [
            Marker::Kernel,
            Marker::Device,
            Marker::LaunchBounds,
            Marker::ClusterLaunch,
            Marker::CooperativeLaunch,
            Marker::LaunchContract,
        ]
        .into_iter()
        .find(|m| m.tool_name() == name)
    }

    /// The name of the tool attribute this marker becomes (`oxide::<name>`).
    pub fn tool_name(self) -> &'static str {
        match self {
            Marker::Kernel => attrs::KERNEL,
            Marker::Device => attrs::DEVICE,
            Marker::LaunchBounds => attrs::LAUNCH_BOUNDS,
            Marker::ClusterLaunch => attrs::CLUSTER_LAUNCH,
            Marker::CooperativeLaunch => attrs::COOPERATIVE_LAUNCH,
            Marker::LaunchContract => attrs::LAUNCH_CONTRACT,
        }
    }

    /// `true` when `attr` is our marker or the `cfg_attr(cuda_oxide, oxide::..)` it expands to.
    pub fn present_in(self, attrs: &[Attribute]) -> bool {
        attrs.iter().any(|a| Marker::of(a) == Some(self) || is_tool_attr(a, self.tool_name()))
    }
}

/// `#[cfg_attr(cuda_oxide, oxide::<name>..)]`, or `#[oxide::<name>..]` once the `cfg_attr` is expanded.
pub fn is_tool_attr(attr: &Attribute, name: &str) -> bool {
    let path = attr.path();
    if path.segments.len() == 2 && path.segments[0].ident == attrs::TOOL {
        return path.segments[1].ident == name;
    }
    if !path.is_ident("cfg_attr") {
        return false;
    }
    let text = quote!(#attr).to_string().replace(' ', "");
    text.contains(&format!("{}::{name}", attrs::TOOL))
}

/// `#[allow(unexpected_cfgs)] #[cfg_attr(cuda_oxide, oxide::<name>(<args>))]` (contract §2).
pub fn tool_attr(name: &str, args: Option<TokenStream>) -> TokenStream {
    let (cfg, tool, name) =
        (format_ident!("{}", attrs::CFG), format_ident!("{}", attrs::TOOL), format_ident!("{}", name));
    let args = args.map(|a| quote!((#a)));
    quote! {
        #[allow(unexpected_cfgs)]
        #[cfg_attr(#cfg, #tool::#name #args)]
    }
}

/// `#[launch_bounds(max_threads[, min_blocks])]`.
#[derive(Clone, Copy, Debug)]
pub struct LaunchBounds {
    pub max_threads: u32,
    pub min_blocks: Option<u32>,
}

impl LaunchBounds {
    pub fn parse(tokens: TokenStream, span: Span) -> syn::Result<LaunchBounds> {
        let values =
            int_list(tokens, span, "#[launch_bounds(max_threads)] or #[launch_bounds(max_threads, min_blocks)]")?;
        let (max, min) = match values.as_slice() {
            [max] => (*max, None),
            [max, min] => (*max, Some(*min)),
            _ => {
                return Err(syn::Error::new(
                    span,
                    "#[launch_bounds] takes one or two integers: (max_threads_per_block[, min_blocks_per_sm])",
                ));
            }
        };
        let max_threads = match max.0 {
            n @ 1.. if n <= u64::from(MAX_THREADS_PER_BLOCK) => n as u32,
            n => {
                return Err(syn::Error::new(
                    max.1,
                    format!(
                        "max_threads_per_block must be between 1 and {MAX_THREADS_PER_BLOCK} (a block has at most {MAX_THREADS_PER_BLOCK} threads), got {n}"
                    ),
                ));
            }
        };
        let min_blocks = match min {
            None => None,
            Some((0, span)) => return Err(syn::Error::new(span, "min_blocks_per_sm must be at least 1")),
            Some((n, span)) => {
                Some(u32::try_from(n).map_err(|_| syn::Error::new(span, "min_blocks_per_sm is too large"))?)
            }
        };
        Ok(LaunchBounds { max_threads, min_blocks })
    }

    /// `256, 2` (unsuffixed literals, as contract §2 writes them).
    pub fn tokens(&self) -> TokenStream {
        let max = Literal::u32_unsuffixed(self.max_threads);
        match self.min_blocks.map(Literal::u32_unsuffixed) {
            Some(min) => quote!(#max, #min),
            None => quote!(#max),
        }
    }
}

/// `#[cluster_launch(x, y, z)]`.
pub fn parse_cluster(tokens: TokenStream, span: Span) -> syn::Result<[u32; 3]> {
    let values = int_list(tokens, span, "#[cluster_launch(x, y, z)]")?;
    let [x, y, z] = values.as_slice() else {
        return Err(syn::Error::new(
            span,
            "#[cluster_launch] takes three integers: the cluster shape (x, y, z) in blocks",
        ));
    };
    for (value, span) in [x, y, z] {
        if *value == 0 {
            return Err(syn::Error::new(*span, "cluster dimensions must be at least 1"));
        }
    }
    let size = x.0.saturating_mul(y.0).saturating_mul(z.0);
    if size > u64::from(MAX_CLUSTER_SIZE) {
        return Err(syn::Error::new(
            span,
            format!(
                "a cluster of {size} blocks is too large: at most {MAX_CLUSTER_SIZE} blocks per cluster \
                 (the sm_90 maximum; more than {MAX_PORTABLE_CLUSTER_SIZE} is not portable)"
            ),
        ));
    }
    Ok([x.0 as u32, y.0 as u32, z.0 as u32])
}

pub fn cluster_tokens(dims: [u32; 3]) -> TokenStream {
    let [x, y, z] = dims.map(Literal::u32_unsuffixed);
    quote!(#x, #y, #z)
}

/// Comma-separated integer literals, each with its span.
fn int_list(tokens: TokenStream, span: Span, usage: &str) -> syn::Result<Vec<(u64, Span)>> {
    if tokens.is_empty() {
        return Err(syn::Error::new(span, format!("missing arguments: write {usage}")));
    }
    let exprs = Punctuated::<Expr, Token![,]>::parse_terminated.parse2(tokens)?;
    let mut out = Vec::new();
    for expr in exprs {
        match &expr {
            Expr::Lit(lit) => match &lit.lit {
                Lit::Int(int) => out.push((int.base10_parse::<u64>()?, int.span())),
                other => return Err(syn::Error::new(other.span(), format!("expected an integer literal: {usage}"))),
            },
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    format!("expected an integer literal (constants and expressions are not supported here): {usage}"),
                ));
            }
        }
    }
    Ok(out)
}
