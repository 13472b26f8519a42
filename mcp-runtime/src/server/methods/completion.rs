//! `completion/complete`: suggestions for one prompt argument or template variable.

use crate::protocol::envelope::ResultType;
use crate::protocol::legacy::Shape;
use crate::protocol::{methods, reflect};
use crate::server::Server;
use crate::server::catalog::Catalog;
use crate::server::def::kind;
use crate::server::def::{Call, MAX_COMPLETIONS};
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
    let context = params
        .get("context")
        .and_then(|c| c.get("arguments"))
        .cloned();
    let known = match super::string_map(context) {
        Ok(k) => k,
        Err(e) => return bad(&parts, format!("`context.arguments` {e}")),
    };
    let completer = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let name = reference
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
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
            p.def.item.completers.get(arg_name).cloned()
        }
        Some("ref/resource") => {
            let uri = reference
                .get("uri")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let Some(t) = catalog.resource_by_uri(uri) else {
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
                    format!("template `{uri}` has no variable `{}`", reflect(arg_name)),
                );
            }
            t.def.item.completers.get(arg_name).cloned()
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
        parts.into_request(&inner, methods::COMPLETE, None, None, None);
    let id = request.id.clone();
    let cancel = request.cancel.clone();
    let known = known
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let call = Call::<kind::Completion>::new(known, request);
    let reply_id = id.clone();
    let body = async move {
        let values = match completer {
            None => Vec::new(),
            Some(c) => {
                let run = guarded(inner.limits.request_timeout, move || c(value, call).boxed());
                match run.await {
                    Ok(v) => v,
                    Err(e) => return Reply::rejection(Some(&reply_id), Rejection::failed(e)),
                }
            }
        };
        let total = values.len();
        let mut values = values;
        values.truncate(MAX_COMPLETIONS);
        let body = Completion {
            completion: Values {
                values,
                total,
                has_more: total > MAX_COMPLETIONS,
            },
        };
        let envelope = inner.envelope(ResultType::Complete, body, None, None);
        Reply::in_era(&reply_id, era, Shape::Plain, envelope)
    };
    Prepared::Call(Job::new(id, cancel, span, notifications, body))
}
