//! `completion/complete`: suggestions for one prompt argument or template variable.

use crate::protocol::envelope::ResultType;
use crate::protocol::legacy::Shape;
use crate::protocol::{methods, reflect};
use crate::server::Server;
use crate::server::catalog::Catalog;
use crate::server::def::kind;
use crate::server::def::{Call, MAX_COMPLETIONS, Suggestions};
use crate::server::parts::Parts;
use crate::server::pipeline::{Job, guarded};
use crate::server::reply::{Rejection, Reply};
use crate::server::route::Prepared;
use futures_util::FutureExt;
use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::Arc;

/// The body of a completion result.
#[derive(Serialize)]
struct Completion {
    completion: Values,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Values {
    values: Vec<String>,
    total: usize,
    has_more: bool,
}

impl Values {
    /// At most [`MAX_COMPLETIONS`] values; `total` is never less than the values found, and
    /// `hasMore` says whether the client was given fewer than there are.
    fn of(found: Suggestions) -> Values {
        let mut values = found.values;
        let total = found.total.unwrap_or(0).max(values.len());
        values.truncate(MAX_COMPLETIONS);
        Values {
            has_more: found.has_more || total > values.len(),
            values,
            total,
        }
    }
}

/// `completion/complete`: the reference (`ref/prompt` or `ref/resource`) and the argument
/// must exist (`-32602`); an argument without a completer completes to nothing.
pub(crate) fn complete(
    server: &Server,
    parts: Parts,
    params: Map<String, Value>,
    catalog: &Catalog,
) -> Prepared {
    let bad = |parts: &Parts, m: String| super::reject(parts, Rejection::params(m));
    let Some(reference) = params.get("ref").and_then(Value::as_object) else {
        return bad(&parts, "`params.ref` must be an object".into());
    };
    let argument = params.get("argument");
    let text = |key: &str| argument.and_then(|a| a.get(key)).and_then(Value::as_str);
    let (Some(arg_name), Some(value)) = (text("name"), text("value")) else {
        return bad(
            &parts,
            "`params.argument` must have string `name` and `value`".into(),
        );
    };
    let context = match params.get("context") {
        None | Some(Value::Null) => None,
        Some(Value::Object(c)) => c.get("arguments").cloned(),
        Some(_) => return bad(&parts, "`params.context` must be an object".into()),
    };
    let known = match super::string_map(context) {
        Ok(k) => k,
        Err(e) => return bad(&parts, format!("`context.arguments` {e}")),
    };
    let (completer, mounts) = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let Some(name) = reference.get("name").and_then(Value::as_str) else {
                return bad(&parts, "`ref.name` must be a string".into());
            };
            let Some(p) = catalog.prompts.get(name) else {
                return bad(&parts, format!("Unknown prompt: {}", reflect(name)));
            };
            if let Err(r) =
                crate::server::authz::permit(&server.inner.settings, &parts, &p.def.item)
            {
                return super::reject(&parts, r);
            }
            if !p.def.spec.arguments.iter().any(|a| a.name == arg_name) {
                return bad(
                    &parts,
                    format!("prompt `{name}` has no argument `{}`", reflect(arg_name)),
                );
            }
            let completer = p.def.item.completers.get(arg_name).cloned();
            (completer, p.def.item.mounts.clone())
        }
        Some("ref/resource") => {
            let Some(uri) = reference.get("uri").and_then(Value::as_str) else {
                return bad(&parts, "`ref.uri` must be a string".into());
            };
            // The template's own text, or a URI it (or a static resource) serves.
            let found = catalog
                .resource_by_uri(uri)
                .cloned()
                .or_else(|| catalog.find_resource(uri).map(|(t, _)| t));
            let Some(t) = found else {
                return bad(
                    &parts,
                    format!("Unknown resource template: {}", reflect(uri)),
                );
            };
            if let Err(r) =
                crate::server::authz::permit(&server.inner.settings, &parts, &t.def.item)
            {
                return super::reject(&parts, r);
            }
            if !t.variables.iter().any(|v| v == arg_name) {
                return bad(
                    &parts,
                    format!(
                        "template `{}` has no variable `{}`",
                        t.def.spec.uri,
                        reflect(arg_name)
                    ),
                );
            }
            let completer = t.def.item.completers.get(arg_name).cloned();
            (completer, t.def.item.mounts.clone())
        }
        _ => {
            return bad(
                &parts,
                "`ref.type` must be \"ref/prompt\" or \"ref/resource\"".into(),
            );
        }
    };
    let value = value.to_owned();
    let inner = Arc::clone(&server.inner);
    let era = parts.era();
    let (request, span, notifications) =
        parts.into_request(&inner, methods::COMPLETE, None, None, mounts, None);
    let id = request.id.clone();
    let cancel = request.cancel.clone();
    let known = known
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let call = Call::<kind::Completion>::new(known, request);
    let reply_id = id.clone();
    let body = async move {
        let found = match completer {
            None => Suggestions::default(),
            Some(c) => {
                let run = guarded(inner.limits.request_timeout, move || c(value, call).boxed());
                match run.await.and_then(|r| r.map_err(crate::Error::into_rpc)) {
                    Ok(v) => v,
                    Err(e) => return Reply::rejection(Some(&reply_id), Rejection::failed(e)),
                }
            }
        };
        let body = Completion {
            completion: Values::of(found),
        };
        let envelope = inner.envelope(ResultType::Complete, body, None, None);
        Reply::in_era(&reply_id, era, Shape::Plain, envelope)
    };
    Prepared::Call(Job::new(id, cancel, span, notifications, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize) -> Vec<String> {
        (0..n).map(|i| i.to_string()).collect()
    }

    #[test]
    fn a_result_says_how_many_there_are_and_whether_it_has_them_all() {
        let v = Values::of(values(3).into());
        assert_eq!((v.values.len(), v.total, v.has_more), (3, 3, false));
        let v = Values::of(values(MAX_COMPLETIONS + 5).into());
        assert_eq!(
            (v.values.len(), v.total, v.has_more),
            (MAX_COMPLETIONS, MAX_COMPLETIONS + 5, true)
        );
        // A forwarded completion: the upstream's own total and `hasMore` are kept.
        let v = Values::of(Suggestions {
            values: values(10),
            total: Some(250),
            has_more: true,
        });
        assert_eq!((v.values.len(), v.total, v.has_more), (10, 250, true));
        let v = Values::of(Suggestions {
            values: values(2),
            total: None,
            has_more: true,
        });
        assert_eq!((v.total, v.has_more), (2, true));
        // A total below the values given is not believed.
        let v = Values::of(Suggestions {
            values: values(4),
            total: Some(1),
            has_more: false,
        });
        assert_eq!((v.total, v.has_more), (4, false));
    }
}
