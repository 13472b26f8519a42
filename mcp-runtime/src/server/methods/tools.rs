//! `tools/call`.

use crate::mrtr::round::Binding;
use crate::protocol::envelope::ResultType;
use crate::protocol::legacy::{self, Shape};
use crate::protocol::{CallToolResult, Content, headers, methods, reflect, tasks};
use crate::server::authz;
use crate::server::catalog::Catalog;
use crate::server::def::TaskSupport;
use crate::server::def::kind::Tool;
use crate::server::parts::{Era, Parts, TransportGuard};
use crate::server::pipeline::{ArgumentCheck, ItemRequest};
use crate::server::reply::{Rejection, Reply};
use crate::server::route::Prepared;
use crate::server::{Server, ServerInner};
use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A tool result's own fields (its `_meta` goes in the envelope).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolBody<'a> {
    content: &'a [Content],
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_error: Option<bool>,
}

/// The reply carrying a tool result, in the request's era; `wrap`: the tool's output
/// schema is no object, so a legacy client gets its structured content wrapped
/// ([`legacy::wraps_output`]).
fn complete(
    server: &ServerInner,
    id: &crate::protocol::RequestId,
    mut r: CallToolResult,
    era: Era,
    wrap: bool,
) -> Reply {
    if wrap && matches!(era, Era::Legacy(_)) {
        r.structured_content = r.structured_content.take().map(legacy::wrap_output);
    }
    let body = ToolBody {
        content: &r.content,
        structured_content: r.structured_content.as_ref(),
        is_error: r.is_error,
    };
    let envelope = server.envelope(ResultType::Complete, body, None, r.meta.as_ref());
    Reply::in_era(id, era, Shape::CallTool, envelope)
}

/// A tool result as an object: what a completed task carries, exactly what the call
/// would have answered.
pub(crate) fn result_json(server: &ServerInner, r: &CallToolResult) -> Value {
    let body = ToolBody {
        content: &r.content,
        structured_content: r.structured_content.as_ref(),
        is_error: r.is_error,
    };
    serde_json::to_value(server.envelope(ResultType::Complete, body, None, r.meta.as_ref()))
        .unwrap_or(Value::Null)
}

/// `tools/call`: `Mcp-Name` → arguments → the tool → its `Mcp-Param-*` headers → task or
/// not (`-32021` for a task-only tool without the extension; in a legacy session, which
/// cannot declare it, an `isError` result) → the round (for tools that
/// ask) → argument validation (a violation is an `isError` result) → the handler, now or
/// as a task.
pub(crate) fn call(
    server: &Server,
    parts: Parts,
    mut params: Map<String, Value>,
    guard: &dyn TransportGuard,
    catalog: &Catalog,
) -> Prepared {
    let name = match Parts::target(&mut params, "name", guard) {
        Ok(n) => n,
        Err(r) => return super::reject(&parts, r),
    };
    let arguments = match params.remove("arguments") {
        None => Map::new(),
        Some(Value::Object(a)) => a,
        Some(_) => {
            return super::reject(
                &parts,
                Rejection::params("`params.arguments` must be an object"),
            );
        }
    };
    let Some(tool) = catalog.tools.get(&name) else {
        return super::reject(
            &parts,
            Rejection::params(format!("Unknown tool: {}", reflect(&name))),
        );
    };
    if let Err(r) = authz::permit(&server.inner.settings, &parts, &tool.def.item) {
        return super::reject(&parts, r);
    }
    let mut arguments = Value::Object(arguments);
    for param in &tool.headers {
        let value = param.value(&arguments).filter(|v| !v.is_null());
        if value.is_some_and(|v| !param.fits(v)) {
            // Not an argument of the declared type: validation answers (`isError`).
            continue;
        }
        if let Err(e) = guard.check_param(param, value) {
            return super::reject(&parts, Rejection::header(e));
        }
    }
    headers::drop_null_arguments(&tool.headers, &mut arguments);
    if let Some(p) = super::lacks_input_capabilities(&parts, &tool.def.requirements) {
        return p;
    }
    // Tasks are an extension of the modern era only.
    let declared =
        parts.session.is_none() && parts.meta.capabilities.has_extension(tasks::EXTENSION);
    let as_task = match tool.def.spec.task {
        TaskSupport::Forbidden => false,
        TaskSupport::Optional => declared,
        TaskSupport::Required if declared => true,
        // A legacy session cannot declare the extension at all, and the legacy revisions
        // have no `-32021`: as for any capability a session lacks, the tool's error
        // (`isError`), said plainly.
        TaskSupport::Required if parts.session.is_some() => {
            let why = format!(
                "The tool `{}` runs only as a task, which needs protocol version 2026-07-28 (its tasks extension); this session cannot start one",
                tool.def.item.name
            );
            let result = CallToolResult::error(why);
            let reply = complete(&server.inner, &parts.id, result, parts.era(), false);
            return Prepared::Reply(reply);
        }
        TaskSupport::Required => {
            let what = format!("The tool `{}`", tool.def.item.name);
            return super::reject(&parts, Rejection::failed(tasks::extension_required(&what)));
        }
    };
    let binding = tool.def.requirements.input.map(|engine| {
        Binding::new(engine, methods::TOOLS_CALL, &name, Some(&arguments))
            .for_caller(parts.caller_key())
    });
    let check_tool = Arc::clone(tool);
    let check: ArgumentCheck<Tool> = Box::new(move |arguments| {
        let arguments = Value::Object(arguments);
        let validator = match check_tool.validator() {
            Ok(v) => v,
            Err(e) => {
                tracing::error!(tool = %check_tool.def.item.name, "the inputSchema does not compile: {e}");
                return Err(CallToolResult::error(format!(
                    "The tool `{}` cannot check its arguments: its inputSchema does not compile",
                    check_tool.def.item.name
                )));
            }
        };
        match validator.validate(&arguments) {
            Ok(()) => Ok(into_map(arguments)),
            Err(msg) => {
                tracing::debug!(%msg, "invalid arguments");
                Err(CallToolResult::error(format!(
                    "Invalid arguments for tool `{}`: {msg}",
                    check_tool.def.item.name
                )))
            }
        }
    });
    let arguments = into_map(arguments);
    let item = ItemRequest {
        handler: Arc::clone(&tool.def.handler),
        target: name,
        mime_type: None,
        mounts: tool.def.item.mounts.clone(),
        arguments,
        lists: Default::default(),
        uses_input: binding.is_some(),
        binding,
        check: Some(check),
    };
    if as_task {
        let upfront = tool.def.requirements.asks_upfront;
        let modern = |s: &ServerInner, id: &_, r| complete(s, id, r, Era::Modern, false);
        return match tool.def.spec.engine {
            Some(engine) => (engine.run)(server, parts, &mut params, item, upfront, modern),
            None => super::reject(
                &parts,
                Rejection::failed(crate::protocol::RpcError::internal(
                    "Internal error: the tool runs as a task, with nothing to run it",
                )),
            ),
        };
    }
    let era = parts.era();
    let wrap = tool.wraps_output;
    server.run_item(parts, &mut params, item, move |s, id, r| {
        complete(s, id, r, era, wrap)
    })
}

/// The map of a value built as an object.
fn into_map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}
