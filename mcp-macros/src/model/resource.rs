//! `#[resource("uri", ...)]`: a fixed URI or an RFC 6570 template whose variables bind to
//! the parameters of the same name.

use super::{Cache, Common, CommonArgs, Errors, Site, cache};
use crate::attr::ResourceArgs;
use crate::errors::spanned;
use darling::error::Accumulator;
use mcp_uri_template::UriTemplate;
use proc_macro2::Span;
use syn::{LitStr, Signature};

/// What a resource parameter is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamKind {
    /// Bound to the template variable of the same name.
    Variable,
    /// An extractor (`Context`, `State<T>`, ...).
    Extractor,
    /// Asked of the client (`#[input]`).
    Input,
}

/// Resolved resource annotations.
pub struct ResourceAnnotations {
    pub audience: Vec<String>,
    pub priority: Option<f64>,
    pub last_modified: Option<String>,
}

/// A resource or resource template, validated.
pub struct ResourceFn {
    pub common: Common,
    pub uri: String,
    pub uri_span: Span,
    /// The template's parsed form (for checks across items).
    pub template: UriTemplate,
    pub kinds: Vec<ParamKind>,
    pub mime_type: Option<String>,
    pub size: Option<u64>,
    pub annotations: Option<ResourceAnnotations>,
    pub cache: Option<Cache>,
    pub list: Option<syn::Path>,
}

fn any_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        Err("a resource name cannot be empty".into())
    } else {
        Ok(())
    }
}

impl ResourceFn {
    pub fn build(
        uri: &LitStr,
        args: ResourceArgs,
        attrs: &[syn::Attribute],
        sig: &mut Signature,
        site: Site,
        needs_input: bool,
        acc: &mut Accumulator,
    ) -> Option<ResourceFn> {
        let mut errors = Errors { acc, ok: true };
        let common = Common::build(
            CommonArgs {
                kind: "resource",
                name: args.name.as_ref(),
                title: args.title.clone(),
                description: args.description.as_ref(),
                description_required: false,
                icons: &args.icon,
                meta: args.meta.as_ref(),
                needs_input,
            },
            attrs,
            sig,
            site,
            any_name,
            &mut errors,
        );
        super::no_headers("resource", &common.params, &mut errors);
        let uri_text = uri.value();
        let template = match UriTemplate::parse(&uri_text) {
            Ok(t) => t,
            Err(e) => {
                errors.push(spanned(uri, format!("invalid URI template: {e}\n\n= help: write a URI, or an RFC 6570 template such as \"notes://{{id}}\" or \"file:///{{+path}}\"")));
                return None;
            }
        };
        let variables: Vec<String> = template
            .variables()
            .into_iter()
            .map(|(v, _)| v.to_owned())
            .collect();
        for var in &variables {
            if !common.params.iter().any(|p| &p.name == var) {
                errors.push(spanned(uri, format!(
                    "template variable `{{{var}}}` has no parameter\n\n= help: add a parameter named `{var}`, such as `{var}: String`"
                )));
            }
        }
        let kinds: Vec<ParamKind> = common
            .params
            .iter()
            .map(|p| match (&p.input, variables.contains(&p.name)) {
                (Some(_), _) => ParamKind::Input,
                (None, true) => ParamKind::Variable,
                (None, false) => ParamKind::Extractor,
            })
            .collect();
        for (p, k) in common.params.iter().zip(&kinds) {
            if let (Some(path), ParamKind::Extractor) = (&p.complete, k) {
                errors.push(spanned(
                    path,
                    format!(
                        "`{}` is not a variable of the template, so it cannot be completed",
                        p.name
                    ),
                ));
            }
            if k == &ParamKind::Extractor && p.description.is_some() {
                errors.push(spanned(
                    &p.ident,
                    format!(
                        "`{}` is not a variable of the template, so it has no description",
                        p.name
                    ),
                ));
            }
        }
        if template.is_static()
            && let Some(list) = &args.list
        {
            errors.push(spanned(list, "only a URI template can list the resources it produces\n\n= help: a fixed URI is listed by itself"));
        }

        let annotations = args.annotations.map(|a| {
            let mut audience = Vec::new();
            for path in a.audience.iter().flat_map(|l| l.iter()) {
                match path.get_ident().map(|i| i.to_string()).as_deref() {
                    Some(r @ ("user" | "assistant")) => audience.push(r.to_owned()),
                    _ => errors.push(spanned(
                        path,
                        "unknown audience\n\n= help: use `user` and/or `assistant`",
                    )),
                }
            }
            if let Some(p) = &a.priority
                && !(0.0..=1.0).contains(&**p)
            {
                errors.push(
                    darling::Error::custom("priority must be between 0.0 and 1.0")
                        .with_span(&p.span()),
                );
            }
            if let Some(lm) = &a.last_modified
                && !looks_like_iso8601(lm)
            {
                errors.push(darling::Error::custom(
                    "last_modified must be an ISO 8601 date-time, such as \"2026-07-28T10:00:00Z\"",
                ).with_span(&lm.span()));
            }
            ResourceAnnotations {
                audience,
                priority: a.priority.map(|p| *p),
                last_modified: a.last_modified.map(|l| (*l).clone()),
            }
        });
        let cache = cache(args.ttl_ms, args.cache_scope.as_ref(), &mut errors);
        if !errors.ok {
            return None;
        }
        Some(ResourceFn {
            common,
            uri: uri_text,
            uri_span: uri.span(),
            template,
            kinds,
            mime_type: args.mime_type,
            size: args.size,
            annotations,
            cache,
            list: args.list,
        })
    }
}

/// `YYYY-MM-DD` optionally followed by `T` and a time: enough to catch mistakes.
fn looks_like_iso8601(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
        && (b.len() == 10 || b[10] == b'T')
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn build(uri: &str, f: syn::ItemFn) -> (Option<ResourceFn>, usize) {
        let mut f = f;
        let mut acc = darling::Error::accumulator();
        let lit = LitStr::new(uri, Span::call_site());
        let m = ResourceFn::build(
            &lit,
            ResourceArgs::default(),
            &f.attrs.clone(),
            &mut f.sig,
            Site::Free,
            false,
            &mut acc,
        );
        (m, acc.into_inner().len())
    }

    #[test]
    fn variables_bind_to_parameters() {
        let (m, n) = build(
            "notes://{id}{?rev}",
            parse_quote! { async fn note(id: u64, rev: Option<u32>, cx: Context) -> String { todo!() } },
        );
        assert_eq!(n, 0);
        let m = m.unwrap();
        assert_eq!(
            m.kinds,
            [
                ParamKind::Variable,
                ParamKind::Variable,
                ParamKind::Extractor
            ]
        );
    }

    #[test]
    fn a_variable_without_a_parameter_is_an_error() {
        let (_, n) = build(
            "notes://{id}/{part}",
            parse_quote! { async fn note(id: u64) -> String { todo!() } },
        );
        assert_eq!(n, 1);
        let (_, n) = build(
            "notes://{id",
            parse_quote! { async fn note(id: u64) -> String { todo!() } },
        );
        assert_eq!(n, 1);
    }

    #[test]
    fn dates() {
        assert!(looks_like_iso8601("2026-07-28"));
        assert!(looks_like_iso8601("2026-07-28T10:00:00Z"));
        assert!(!looks_like_iso8601("yesterday"));
    }
}
