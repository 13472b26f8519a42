//! `resources/read`, and `resources/list` when templates have list functions.

use crate::mrtr::round::Binding;
use crate::protocol::envelope::ResultType;
use crate::protocol::legacy::Shape;
use crate::protocol::{RpcError, methods};
use crate::server::Server;
use crate::server::catalog::Catalog;
use crate::server::catalog::pages::{ListBody, decode_cursor, encode_cursor};
use crate::server::def::kind::Resource;
use crate::server::parts::{Parts, TransportGuard};
use crate::server::pipeline::{ItemRequest, Job, guarded};
use crate::server::reply::{Rejection, Reply};
use crate::server::route::Prepared;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

/// The body of a `resources/read` result.
#[derive(Serialize)]
struct Contents<'a> {
    contents: &'a [crate::protocol::ResourceContents],
}

/// The resources' engine, which [`ResourceDef::new`](crate::def::ResourceDef::new) names.
pub(crate) static ENGINE: super::ResourceEngine = super::Engine {
    compile: crate::server::catalog::compile::resource,
    serve,
    complete: super::completion::complete,
    more: super::Templates {
        find: |templates, uri| {
            let mut found = templates.iter().map(|t| (t, t.template.captures(uri)));
            found.find_map(|(t, vars)| Some((Arc::clone(t), vars?)))
        },
        clash: |a, b| a.def.spec.uri == b.def.spec.uri || a.template.overlaps(&b.template),
    },
};

/// `resources/list` or `resources/read`, by `parts.method`.
fn serve(
    server: &Server,
    parts: Parts,
    params: Map<String, Value>,
    guard: &dyn TransportGuard,
    catalog: &Catalog,
) -> Prepared {
    if parts.method == methods::RESOURCES_LIST {
        list(server, parts, params, catalog)
    } else {
        read(server, parts, params, guard, catalog)
    }
}

/// `resources/read`: `Mcp-Name` → the resource serving the URI (`-32602` with `data.uri`
/// when none does) → the round (for resources that ask) → the handler. Results carry the
/// resource's caching hints (or the server's default for reads).
pub(crate) fn read(
    server: &Server,
    parts: Parts,
    mut params: Map<String, Value>,
    guard: &dyn TransportGuard,
    catalog: &Catalog,
) -> Prepared {
    let uri = match Parts::target(&mut params, "uri", guard) {
        Ok(u) => u,
        Err(r) => return super::reject(&parts, r),
    };
    if uri.len() > mcp_uri_template::MAX_URI_LEN {
        // Too long to be served (S-8): said as such, not as a missing resource echoing
        // the whole URI back in `data.uri`.
        let e = RpcError::invalid_params(format!(
            "the URI is {} bytes long; a resource URI may have at most {} (8 KiB)",
            uri.len(),
            mcp_uri_template::MAX_URI_LEN
        ));
        return super::reject(&parts, Rejection::failed(e));
    }
    let Some((entry, variables)) = catalog.find_resource(&uri) else {
        tracing::debug!("resource not found");
        return super::reject(
            &parts,
            Rejection::failed(RpcError::resource_not_found(&uri)),
        );
    };
    if let Err(r) = crate::server::authz::permit(&server.inner.settings, &parts, &entry.def.item) {
        return super::reject(&parts, r);
    }
    if let Some(p) = super::lacks_input_capabilities(&parts, &entry.def.requirements) {
        return p;
    }
    let binding = entry.def.requirements.input.map(|engine| {
        Binding::new(engine, methods::RESOURCES_READ, &uri, None).for_caller(parts.caller_key())
    });
    let mut lists = BTreeMap::new();
    let mut arguments = Map::new();
    for (name, capture) in variables {
        let (value, items) = capture.into_parts();
        arguments.insert(name.clone(), Value::String(value));
        lists.insert(name, items);
    }
    let hints = entry
        .def
        .item
        .cache
        .unwrap_or(server.inner.settings.caching.reads);
    let item = ItemRequest::<Resource> {
        handler: Arc::clone(&entry.def.handler),
        target: uri,
        mime_type: entry.def.spec.mime_type.clone(),
        mounts: entry.def.item.mounts.clone(),
        arguments,
        lists,
        uses_input: binding.is_some(),
        binding,
        check: None,
    };
    let era = parts.era();
    let served = item.target.clone();
    server.run_item(parts, &mut params, item, move |server, id, contents| {
        if contents.is_empty() {
            // A read answers with the resource's contents; none at all is how a missing
            // resource must never be answered (RES-07).
            tracing::warn!("a resource handler returned no contents; answered as not found");
            return Reply::rejection(
                Some(id),
                Rejection::failed(RpcError::resource_not_found(&served)),
            );
        }
        let body = Contents {
            contents: &contents,
        };
        let envelope = server.envelope(ResultType::Complete, body, Some(hints), None);
        Reply::in_era(id, era, Shape::ReadResource, envelope)
    })
}

/// `resources/list`. Without list functions, the precomputed pages. With them, the fixed
/// resources plus what every list function returns now, sorted and paged by URI.
pub(crate) fn list(
    server: &Server,
    parts: Parts,
    params: Map<String, Value>,
    catalog: &Catalog,
) -> Prepared {
    if catalog.listers.is_empty() {
        return Prepared::Reply(super::lists::page(
            &server.inner,
            &parts,
            &params,
            &catalog.resource_list,
        ));
    }
    let cursor = match super::cursor(&params) {
        Ok(None) => None,
        Ok(Some(c)) => match decode_cursor("resources", c) {
            Some(after) => Some(after),
            None => return super::reject(&parts, Rejection::params("invalid cursor")),
        },
        Err(e) => return super::reject(&parts, Rejection::params(e)),
    };
    let inner = Arc::clone(&server.inner);
    let catalog = inner.catalog();
    let era = parts.era();
    // What this caller may see: the static resources and the templates (whose list
    // functions run) its scopes cover.
    let can = |item: &crate::server::def::Item| {
        crate::server::authz::permit(&inner.settings, &parts, item).is_ok()
    };
    let statics: Vec<(String, Arc<RawValue>)> = catalog
        .statics
        .values()
        .filter(|r| can(&r.def.item))
        .map(|r| (r.def.spec.uri.clone(), Arc::clone(&r.json)))
        .collect();
    let listers: Vec<_> = catalog
        .templates
        .iter()
        .filter(|t| can(&t.def.item))
        .filter_map(|t| Some((t.def.spec.uri.clone(), t.def.spec.lister.clone()?)))
        .collect();
    let (request, span, notifications) =
        parts.into_request(&inner, methods::RESOURCES_LIST, None, None, None, None);
    let id = request.id.clone();
    let cancel = request.cancel.clone();
    let reply_id = id.clone();
    let body = async move {
        let timeout = inner.limits.request_timeout;
        let listed =
            futures_util::future::join_all(listers.iter().map(|(_, l)| guarded(timeout, || l())))
                .await;
        // Inserted one by one, as the listed ones are below (one BTreeMap code path).
        let mut entries: BTreeMap<String, Arc<RawValue>> = BTreeMap::new();
        for (uri, json) in statics {
            entries.entry(uri).or_insert(json);
        }
        for ((template, _), r) in listers.iter().zip(listed) {
            match r.map(|r| r.map_err(crate::Error::into_rpc)) {
                Ok(Ok(list)) => {
                    for res in list {
                        // Listed is readable: an entry no resource serves is left out.
                        if catalog.find_resource(&res.uri).is_none() {
                            tracing::warn!(
                                template = %template,
                                uri = %res.uri,
                                "a list function returned a URI that no resource serves; left out of resources/list"
                            );
                            continue;
                        }
                        if let Ok(v) = serde_json::value::to_raw_value(&res) {
                            entries.entry(res.uri).or_insert(Arc::from(v));
                        }
                    }
                }
                Ok(Err(e)) | Err(e) => {
                    return Reply::rejection(Some(&reply_id), Rejection::failed(e));
                }
            }
        }
        let page_size = inner.settings.page_size;
        let start = cursor.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let mut page: Vec<(&String, &Arc<RawValue>)> = entries
            .range::<str, _>((start, Bound::Unbounded))
            .take(page_size + 1)
            .collect();
        let more = page.len() > page_size;
        page.truncate(page_size);
        let next_cursor = page
            .last()
            .filter(|_| more)
            .map(|(last, _)| encode_cursor("resources", last));
        let items: Vec<&RawValue> = page.into_iter().map(|(_, v)| &**v).collect();
        let body = ListBody {
            key: "resources",
            items: &items,
            next_cursor,
        };
        let hints = catalog.resource_list.hints;
        let envelope = inner.envelope(ResultType::Complete, body, Some(hints), None);
        Reply::in_era(&reply_id, era, Shape::Resources, envelope)
    };
    drop(request);
    Prepared::Call(Job::new(id, cancel, span, notifications, body))
}
