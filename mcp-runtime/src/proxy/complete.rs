//! Completion through the proxy: when the upstream declares `completions`, each argument of
//! a proxied prompt and each variable of a proxied resource template completes by asking
//! the upstream (`completion/complete`) under the upstream's own names, with the arguments
//! the client already filled in. The upstream's `total` and `hasMore` are kept; its errors
//! reach the client as errors, not as an empty list.

use super::failed;
use super::link::Link;
use crate::server::def::{Call, Completer, Suggestions, kind};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Whether the upstream answers `completion/complete`.
pub(super) fn offered(link: &Link) -> bool {
    link.capabilities().contains_key("completions")
}

/// A completer of `argument` that asks the upstream about its item `reference` (a
/// `ref/prompt` or `ref/resource` object in the upstream's names).
pub(super) fn completer(link: &Arc<Link>, reference: Value, argument: &str) -> Completer {
    let link = Arc::clone(link);
    let argument = argument.to_owned();
    Arc::new(move |partial, call: Call<kind::Completion>| {
        let params = params(&reference, &argument, partial, call.arguments);
        let link = Arc::clone(&link);
        Box::pin(async move {
            let answer = link
                .request("completion/complete", params)
                .await
                .map_err(failed)?;
            Ok(suggestions(&answer))
        })
    })
}

/// The upstream's `completion/complete` params. `context` only when the client sent
/// known arguments (revisions before 2025-06-18 do not have it).
fn params(reference: &Value, argument: &str, partial: String, known: Map<String, Value>) -> Value {
    let mut params = json!({
        "ref": reference,
        "argument": { "name": argument, "value": partial },
    });
    if !known.is_empty() {
        params["context"] = json!({ "arguments": known });
    }
    params
}

/// The suggestions of an upstream's completion result: its string values (anything else
/// in the list is skipped), its `total` and `hasMore`. More than
/// [`MAX_COMPLETIONS`](crate::handler::MAX_COMPLETIONS) values
/// are cut where the result is written, which then says there are more.
fn suggestions(result: &Value) -> Suggestions {
    let completion = &result["completion"];
    Suggestions {
        values: completion["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        total: completion["total"]
            .as_u64()
            .map(|t| usize::try_from(t).unwrap_or(usize::MAX)),
        has_more: completion["hasMore"].as_bool().unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::def::MAX_COMPLETIONS;

    #[test]
    fn the_upstreams_params_carry_what_the_client_knows() {
        let r = json!({"type": "ref/prompt", "name": "team"});
        let p = params(&r, "name", "Da".into(), Map::new());
        assert_eq!(
            p,
            json!({"ref": r, "argument": {"name": "name", "value": "Da"}})
        );
        let known = json!({"department": "Sales"}).as_object().unwrap().clone();
        let p = params(&r, "name", String::new(), known);
        assert_eq!(p["context"], json!({"arguments": {"department": "Sales"}}));
    }

    #[test]
    fn an_upstreams_result_is_read_leniently() {
        let s = suggestions(&json!({"completion": {
            "values": ["a", 7, "b", null],
            "total": 250,
            "hasMore": true,
        }}));
        assert_eq!(s.values, ["a", "b"]);
        assert_eq!((s.total, s.has_more), (Some(250), true));
        let many: Vec<String> = (0..MAX_COMPLETIONS + 3).map(|i| i.to_string()).collect();
        let s = suggestions(&json!({"completion": {"values": many}}));
        assert_eq!(s.values.len(), MAX_COMPLETIONS + 3);
        assert_eq!((s.total, s.has_more), (None, false));
        assert_eq!(suggestions(&json!({})), Suggestions::default());
    }
}
