//! `server/discover` and the precomputed list methods (`tools/list`, `prompts/list`,
//! `resources/templates/list`, and `resources/list` without list functions).

use crate::server::ServerInner;
use crate::server::catalog::{Catalog, ListPages};
use crate::server::parts::Parts;
use crate::server::reply::{Rejection, Reply};
use serde_json::{Map, Value};

/// `server/discover`: computed when the catalog was assembled.
pub(crate) fn discover(parts: &Parts, catalog: &Catalog) -> Reply {
    Reply::result(&parts.id, &*catalog.discover)
}

/// One page of a list, from its precomputed pages.
pub(crate) fn page(
    server: &ServerInner,
    parts: &Parts,
    params: &Map<String, Value>,
    pages: &ListPages,
) -> Reply {
    let cursor = match super::cursor(params) {
        Ok(c) => c,
        Err(e) => return Reply::rejection(Some(&parts.id), Rejection::params(e)),
    };
    // A caller who may not use some items does not see them.
    let server_info = server.settings.server_info.as_deref();
    let view = match (&server.settings.auth, &parts.principal) {
        (Some(auth), Some(caller)) => pages.for_caller(
            |scopes| {
                auth.implies
                    .missing(caller.granted_scopes(), scopes)
                    .is_empty()
            },
            server_info,
        ),
        _ => None,
    };
    let pages = view.as_deref().unwrap_or(pages);
    let page = match parts.era() {
        crate::server::parts::Era::Modern => pages.page(cursor, server_info),
        crate::server::parts::Era::Legacy(version) => pages.legacy_page(cursor, version),
    };
    match page {
        Some(page) => Reply::result(&parts.id, &*page),
        None => Reply::rejection(Some(&parts.id), Rejection::params("invalid cursor")),
    }
}
