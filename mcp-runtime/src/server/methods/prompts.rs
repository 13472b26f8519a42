//! `prompts/get`.

use crate::mrtr::round::Binding;
use crate::protocol::envelope::ResultType;
use crate::protocol::legacy::Shape;
use crate::protocol::{methods, reflect};
use crate::server::Server;
use crate::server::catalog::Catalog;
use crate::server::parts::{Parts, TransportGuard};
use crate::server::pipeline::ItemRequest;
use crate::server::reply::{Rejection, Reply};
use crate::server::route::Prepared;
use serde_json::{Map, Value};
use std::sync::Arc;

/// The prompts' engine, which [`PromptDef::new`](crate::def::PromptDef::new) names.
pub(crate) static ENGINE: super::PromptEngine = super::Engine {
    compile: crate::server::catalog::compile::prompt,
    serve: get,
    complete: super::completion::complete,
    more: (),
};

/// `prompts/get`: `Mcp-Name` → string arguments → the prompt → what its inputs need of the
/// client (`-32021`) → its required arguments and no others (`-32602`) → the round (for
/// prompts that ask) → the handler.
pub(crate) fn get(
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
    let arguments = match super::string_map(params.remove("arguments")) {
        Ok(a) => a,
        Err(e) => {
            return super::reject(&parts, Rejection::params(format!("`params.arguments` {e}")));
        }
    };
    let Some(prompt) = catalog.prompts.get(&name) else {
        return super::reject(
            &parts,
            Rejection::params(format!("Unknown prompt: {}", reflect(&name))),
        );
    };
    if let Err(r) = crate::server::authz::permit(&server.inner.settings, &parts, &prompt.def.item) {
        return super::reject(&parts, r);
    }
    if let Some(p) = super::lacks_input_capabilities(&parts, &prompt.def.requirements) {
        return p;
    }
    if let Some(missing) = prompt
        .def
        .spec
        .arguments
        .iter()
        .find(|a| a.required && !arguments.contains_key(&a.name))
    {
        return super::reject(
            &parts,
            Rejection::params(format!(
                "missing required argument `{}` for prompt `{name}`",
                missing.name
            )),
        );
    }
    // An argument the prompt does not declare (`file_path` for `filePath`) would be
    // dropped unseen: refused, as a tool's unknown argument is (PROMPT-08).
    let declared = &prompt.def.spec.arguments;
    if let Some(unknown) = arguments
        .keys()
        .find(|k| !declared.iter().any(|a| a.name == **k))
    {
        let names: Vec<&str> = declared.iter().map(|a| a.name.as_str()).collect();
        let known = match names.is_empty() {
            true => "it takes none".to_owned(),
            false => format!("its arguments: {}", names.join(", ")),
        };
        return super::reject(
            &parts,
            Rejection::params(format!(
                "unknown argument `{}` for prompt `{name}` ({known})",
                reflect(unknown)
            )),
        );
    }
    let arguments: Map<String, Value> = arguments
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let binding = prompt.def.requirements.input.map(|engine| {
        Binding::new(
            engine,
            methods::PROMPTS_GET,
            &name,
            Some(&Value::Object(arguments.clone())),
        )
        .for_caller(parts.caller_key())
    });
    let item = ItemRequest {
        handler: Arc::clone(&prompt.def.handler),
        target: name,
        mime_type: None,
        mounts: prompt.def.item.mounts.clone(),
        arguments,
        lists: Default::default(),
        uses_input: binding.is_some(),
        binding,
        check: None,
    };
    let era = parts.era();
    server.run_item(parts, &mut params, item, move |server, id, result| {
        let envelope = server.envelope(ResultType::Complete, &result, None, None);
        Reply::in_era(id, era, Shape::GetPrompt, envelope)
    })
}
