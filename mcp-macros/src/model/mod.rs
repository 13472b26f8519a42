//! Stage 2, model: one description of an item, whatever its kind, resolved from what
//! `attr` parsed. Names and descriptions get their defaults, parameters their roles; no
//! rule is judged here (that is `check`), so the model also describes broken items, which
//! is what lets `check` report every mistake at once.

mod param;
mod server;

use param::param;
pub use param::{InputKind, Param, Role};
pub use server::ServerImpl;

use crate::attr::{Kind, Options, RawParam};
use crate::doc::{self, Doc};
use darling::util::SpannedValue;
use mcp_uri_template::UriTemplate;
use proc_macro2::Span;
use syn::spanned::Spanned as _;
use syn::{FnArg, Ident, LitStr, Signature, Type};

/// Where the function sits, which decides what receivers are allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    /// A free function (`#[tool]` alone).
    Free,
    /// A method inside `#[server] impl`.
    Method,
}

/// How a method receives its server value.
#[derive(Debug, Clone)]
pub enum Receiver {
    /// A free function, or an associated function without `self`.
    None,
    /// `&self`: at the `self` token.
    Ref(Span),
    /// `self`, `&mut self`, `self: Box<Self>`, ...: at the `self` token.
    Other(Span),
}

/// A value and where it was written.
#[derive(Debug, Clone)]
pub struct Sp<T> {
    pub value: T,
    pub span: Span,
}

impl<T: Clone> From<&SpannedValue<T>> for Sp<T> {
    fn from(v: &SpannedValue<T>) -> Self {
        Sp {
            value: (**v).clone(),
            span: v.span(),
        }
    }
}

/// What the signature looks like, for the rules on its shape.
pub struct Shape {
    /// `async fn`; a plain `fn` runs on the blocking pool.
    pub is_async: bool,
    /// The generic parameters, when there are any.
    pub generics: Option<syn::punctuated::Punctuated<syn::GenericParam, syn::Token![,]>>,
    pub variadic: Option<crate::errors::Place>,
    pub receiver: Receiver,
    /// The declared return type (or the name, without one): errors about it land here.
    pub return_span: Span,
    /// `unsafe`, where written.
    pub unsafety: Option<Span>,
    /// `extern "ABI"`, where written.
    pub abi: Option<Span>,
    /// The error type of a `Result<T, Box<dyn ...Error...>>` return type whose trait
    /// object lacks `Send` or `Sync` (as written; an alias is not seen through).
    pub unshareable_error: Option<Type>,
}

/// `E` of a return type written `Result<T, E>` (any path ending in `Result`), when `E` is
/// `Box<dyn ... Error ...>` without both `Send` and `Sync` among its bounds.
fn unshareable_error(output: &syn::ReturnType) -> Option<Type> {
    let syn::ReturnType::Type(_, ty) = output else {
        return None;
    };
    let Type::Path(p) = &**ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|a| match a {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    let (Some(_), Some(err), None) = (types.next(), types.next(), types.next()) else {
        return None;
    };
    let Type::Path(boxed) = err else { return None };
    let last = boxed.path.segments.last()?;
    if last.ident != "Box" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let Some(syn::GenericArgument::Type(Type::TraitObject(object))) = args.args.first() else {
        return None;
    };
    let traits: Vec<String> = object
        .bounds
        .iter()
        .filter_map(|b| match b {
            syn::TypeParamBound::Trait(t) => t.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        })
        .collect();
    let has = |name: &str| traits.iter().any(|t| t == name);
    (has("Error") && !(has("Send") && has("Sync"))).then(|| err.clone())
}

/// An icon.
pub struct Icon {
    pub src: Sp<String>,
    pub mime_type: Option<String>,
    pub sizes: Vec<String>,
    pub theme: Option<Sp<String>>,
}

/// Caching hints.
pub struct Cache {
    pub ttl_ms: Option<u64>,
    pub scope: Option<Sp<String>>,
}

/// Tool behaviour hints.
#[derive(Default)]
pub struct Annotations {
    pub title: Option<String>,
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
}

/// Resource annotations.
pub struct ResourceAnnotations {
    pub audience: Vec<syn::Path>,
    pub priority: Option<Sp<f64>>,
    pub last_modified: Option<Sp<String>>,
}

/// What a tool adds.
pub struct ToolSpec {
    pub annotations: Option<Annotations>,
    /// A hand-written `inputSchema` (JSON text).
    pub input_schema: Option<Sp<String>>,
    pub inline_refs: bool,
    /// `task = "optional" | "required"`.
    pub task: Option<Sp<String>>,
    /// `ui = "ui://..."`: the MCP App view.
    pub ui: Option<Sp<String>>,
}

/// What a resource adds.
pub struct ResourceSpec {
    pub uri: LitStr,
    /// The parsed template, or why it does not parse.
    pub template: Result<UriTemplate, String>,
    pub mime_type: Option<String>,
    pub size: Option<u64>,
    pub annotations: Option<ResourceAnnotations>,
    pub list: Option<syn::Path>,
    /// `app` / `app(...)`: served as an MCP App view (with where `app` was written).
    pub app: Option<Box<(proc_macro2::Span, crate::attr::AppArgs)>>,
}

/// What the kind adds.
pub enum Spec {
    Tool(ToolSpec),
    Resource(ResourceSpec),
    Prompt,
}

/// One tool, resource or prompt.
pub struct Item {
    pub kind: Kind,
    pub site: Site,
    /// `crate = "..."`, when given.
    pub krate: Option<Sp<syn::Path>>,
    pub ident: Ident,
    pub name: Sp<String>,
    pub title: Option<String>,
    /// The explicit description (`description = ".."`), when given.
    pub description_option: Option<Sp<String>>,
    /// The description: the explicit one, else the doc comment.
    pub description: Option<Doc>,
    pub icons: Vec<Icon>,
    /// `meta = r#"{...}"#`, as written.
    pub meta: Option<Sp<String>>,
    pub cache: Option<Cache>,
    /// `scopes("..")`, as written.
    pub scopes: Vec<Sp<String>>,
    /// `layer = expr`, each as written.
    pub layers: Vec<syn::Expr>,
    pub shape: Shape,
    /// Where `#[needs_input]` was written.
    pub needs_input: Option<crate::errors::Place>,
    pub params: Vec<Param>,
    pub spec: Spec,
    /// The type of the `#[server]` impl a method belongs to, as written.
    pub owner: Option<String>,
    /// Other item attributes on the same function (`#[tool] #[prompt]`), and where.
    pub also: Vec<(crate::errors::Place, Kind)>,
    /// The conditions of the function's `#[cfg(..)]` (and of `#[cfg_attr(.., cfg(..))]`),
    /// each as `cfg(..)` would take it: what is generated for the item is compiled under
    /// them too, and an item that may be compiled out collides with no other. (Only a
    /// method's: rustc evaluates a free function's own `cfg` before expanding `#[tool]`,
    /// but not those of the methods of an impl given to `#[server]`.)
    pub cfg: Vec<proc_macro2::TokenStream>,
}

impl Item {
    /// The model of `sig` (helper attributes already taken into `params`) with `options`.
    pub fn build(
        kind: Kind,
        options: Options,
        attrs: &[syn::Attribute],
        sig: &Signature,
        params: Vec<RawParam>,
        needs_input: Option<crate::errors::Place>,
        site: Site,
    ) -> Item {
        let common = options.common();
        let ident = sig.ident.clone();
        let name = match &common.name {
            Some(n) => n.into(),
            None => Sp {
                value: ident.to_string().trim_start_matches("r#").to_owned(),
                span: ident.span(),
            },
        };
        let description_option: Option<Sp<String>> = common.description.as_ref().map(Into::into);
        let description = match &description_option {
            Some(d) => Some(Doc::Text(d.value.clone())),
            None => doc::extract(attrs),
        };
        let icons = common
            .icon
            .iter()
            .map(|icon| Icon {
                src: (&icon.src).into(),
                mime_type: icon.mime_type.clone(),
                sizes: icon
                    .sizes
                    .as_deref()
                    .unwrap_or("")
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect(),
                theme: icon.theme.as_ref().map(Into::into),
            })
            .collect();
        let layers = common.layer.clone();
        let scopes = common
            .scopes
            .iter()
            .flatten()
            .map(|l| Sp {
                value: l.value(),
                span: l.span(),
            })
            .collect();
        let cache = (common.ttl_ms.is_some() || common.cache_scope.is_some()).then(|| Cache {
            ttl_ms: common.ttl_ms,
            scope: common.cache_scope.as_ref().map(Into::into),
        });
        let shape = shape(sig);
        let title = common.title.clone();
        let meta = common.meta.as_ref().map(Into::into);
        let krate = common.krate.as_ref().map(Into::into);
        let spec = match options {
            Options::Tool(t) => Spec::Tool(ToolSpec {
                annotations: t.annotations.map(|a| Annotations {
                    title: a.title,
                    read_only_hint: a.read_only_hint,
                    destructive_hint: a.destructive_hint,
                    idempotent_hint: a.idempotent_hint,
                    open_world_hint: a.open_world_hint,
                }),
                input_schema: t.input_schema.as_ref().map(Into::into),
                inline_refs: t.inline_refs.is_present(),
                task: t.task.as_ref().map(Into::into),
                ui: t.ui.as_ref().map(Into::into),
            }),
            Options::Resource(uri, r) => Spec::Resource(ResourceSpec {
                template: UriTemplate::parse(&uri.value()).map_err(|e| e.to_string()),
                uri,
                mime_type: r.mime_type,
                size: r.size,
                annotations: r.annotations.map(|a| ResourceAnnotations {
                    audience: a.audience.map(|l| l.to_vec()).unwrap_or_default(),
                    priority: a.priority.as_ref().map(Into::into),
                    last_modified: a.last_modified.as_ref().map(Into::into),
                }),
                list: r.list,
                app: r.app.as_ref().map(|a| {
                    let span = a.span();
                    let args = match &**a {
                        darling::util::Override::Inherit => Default::default(),
                        darling::util::Override::Explicit(x) => x.clone(),
                    };
                    Box::new((span, args))
                }),
            }),
            Options::Prompt(_) => Spec::Prompt,
        };
        let variables: Vec<String> = match &spec {
            Spec::Resource(r) => r
                .template
                .as_ref()
                .map(|t| {
                    t.variables()
                        .into_iter()
                        .map(|(v, _)| v.to_owned())
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let params = params
            .into_iter()
            .map(|raw| param(raw, kind, &variables))
            .collect();
        Item {
            kind,
            site,
            krate,
            ident,
            name,
            title,
            description_option,
            description,
            icons,
            meta,
            cache,
            scopes,
            layers,
            shape,
            needs_input,
            params,
            spec,
            owner: None,
            also: Vec::new(),
            cfg: cfg_conditions(attrs),
        }
    }

    /// The template variables of a resource (empty for other kinds or a broken template).
    pub fn variables(&self) -> Vec<String> {
        match &self.spec {
            Spec::Resource(ResourceSpec {
                template: Ok(t), ..
            }) => t
                .variables()
                .into_iter()
                .map(|(v, _)| v.to_owned())
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// The conditions under which an item with `attrs` is compiled: each `#[cfg(c)]` gives
/// `c`, each `#[cfg_attr(p, .., cfg(c), ..)]` gives `any(not(p), all(c))` (nested
/// `cfg_attr`s too). Other attributes of a `cfg_attr` do not decide whether the item
/// exists, so they give nothing.
fn cfg_conditions(attrs: &[syn::Attribute]) -> Vec<proc_macro2::TokenStream> {
    attrs.iter().filter_map(|a| condition(&a.meta)).collect()
}

fn condition(meta: &syn::Meta) -> Option<proc_macro2::TokenStream> {
    let syn::Meta::List(list) = meta else {
        return None;
    };
    if list.path.is_ident("cfg") {
        let c = &list.tokens;
        return Some(quote::quote!(#c));
    }
    if !list.path.is_ident("cfg_attr") {
        return None;
    }
    let parsed = list
        .parse_args_with(syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated)
        .ok()?;
    let mut parts = parsed.iter();
    let predicate = parts.next()?;
    let inner: Vec<proc_macro2::TokenStream> = parts.filter_map(condition).collect();
    (!inner.is_empty()).then(|| quote::quote!(any(not(#predicate), all(#(#inner),*))))
}

fn shape(sig: &Signature) -> Shape {
    let receiver = match sig.inputs.first() {
        Some(FnArg::Receiver(r)) => {
            let shared_self = match &r.kind {
                syn::ReceiverKind::Reference(_, _, None) => true,
                // `self: &Self` is `&self` spelled out.
                syn::ReceiverKind::Typed(_, ty) => matches!(&**ty, Type::Reference(rf)
                    if rf.mutability.is_none()
                        && matches!(&*rf.elem, Type::Path(p) if p.qself.is_none() && p.path.is_ident("Self"))),
                _ => false,
            };
            if shared_self {
                Receiver::Ref(r.self_token.span)
            } else {
                Receiver::Other(r.self_token.span)
            }
        }
        _ => Receiver::None,
    };
    Shape {
        is_async: sig.asyncness.is_some(),
        generics: (!sig.generics.params.is_empty()).then(|| sig.generics.params.clone()),
        variadic: sig.variadic.as_ref().map(crate::errors::Place::of),
        receiver,
        return_span: match &sig.output {
            syn::ReturnType::Type(_, ty) => ty.span(),
            syn::ReturnType::Default => sig.ident.span(),
        },
        unsafety: match &sig.safety {
            syn::Safety::Unsafe(u) => Some(u.span),
            _ => None,
        },
        abi: sig.abi.as_ref().map(syn::spanned::Spanned::span),
        unshareable_error: unshareable_error(&sig.output),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::attr;
    use crate::errors::Errors;
    use quote::quote;

    pub(crate) fn model(
        kind: Kind,
        args: proc_macro2::TokenStream,
        f: proc_macro2::TokenStream,
    ) -> (Option<Item>, Errors) {
        let mut errors = Errors::new();
        let mut func: attr::Function = syn::parse2(f).unwrap();
        let needs_input = attr::take_needs_input(&mut func.attrs, None, &mut errors);
        let params = attr::take_params(&mut func.sig, None, &mut errors);
        let item = attr::options(kind, args, &mut errors).map(|o| {
            Item::build(
                kind,
                o,
                &func.attrs,
                &func.sig,
                params,
                needs_input,
                Site::Free,
            )
        });
        (item, errors)
    }

    #[test]
    fn names_and_descriptions_get_their_defaults() {
        let (item, errors) = model(
            Kind::Tool,
            quote!(),
            quote! {
                /// Adds.
                async fn r#add(a: i64, #[arg(name = "second", description = "b")] b: Option<i64>) -> i64 { a }
            },
        );
        assert!(errors.is_empty());
        let item = item.unwrap();
        assert_eq!(item.name.value, "add");
        assert!(matches!(item.description, Some(Doc::Text(ref t)) if t == "Adds."));
        assert_eq!(item.params[1].name.value, "second");
        assert_eq!(item.params[1].description.as_ref().unwrap().value, "b");
        assert_eq!(item.params[0].role, Role::Parameter);
        assert!(matches!(item.shape.receiver, Receiver::None));
    }

    #[test]
    fn cfg_conditions_are_read_from_cfg_and_cfg_attr() {
        let attrs: Vec<syn::Attribute> = vec![
            syn::parse_quote!(#[cfg(feature = "admin")]),
            syn::parse_quote!(#[cfg_attr(unix, cfg(test), inline)]),
            syn::parse_quote!(#[cfg_attr(unix, inline)]),
            syn::parse_quote!(#[cfg_attr(a, cfg_attr(b, cfg(c)))]),
            syn::parse_quote!(#[doc = "x"]),
        ];
        let c: Vec<String> = cfg_conditions(&attrs)
            .iter()
            .map(|t| t.to_string())
            .collect();
        assert_eq!(
            c,
            [
                "feature = \"admin\"",
                "any (not (unix) , all (test))",
                "any (not (a) , all (any (not (b) , all (c))))",
            ]
        );
    }

    #[test]
    fn resource_parameters_are_variables_or_extractors() {
        let (item, _) = model(
            Kind::Resource,
            quote!("notes://{id}{?rev}"),
            quote! { async fn note(id: u64, rev: Option<u32>, cx: Context) -> String { todo!() } },
        );
        let roles: Vec<Role> = item.unwrap().params.iter().map(|p| p.role).collect();
        assert_eq!(roles, [Role::Variable, Role::Variable, Role::Extractor]);
    }

    #[test]
    fn inputs_take_the_parameter_name_as_key() {
        let (item, errors) = model(
            Kind::Tool,
            quote!(),
            quote! {
                #[needs_input]
                async fn t(#[input(elicit = "Who?")] user: Login, #[input(roots, key = "r")] roots: Vec<Value>) {}
            },
        );
        assert!(errors.is_empty());
        let item = item.unwrap();
        assert!(item.needs_input.is_some());
        assert_eq!(item.params[0].input.as_ref().unwrap().key.value, "user");
        assert_eq!(item.params[1].input.as_ref().unwrap().key.value, "r");
        assert_eq!(item.params[1].role, Role::Input);
    }
}
