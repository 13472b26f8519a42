//! The caller against an item's scopes: one check, for calls and for lists.

use crate::protocol::RpcError;
use crate::server::catalog::Settings;
use crate::server::def::Item;
use crate::server::parts::Parts;
use crate::server::reply::{ErrorClass, Rejection};
use serde_json::json;

/// Whether the caller of `parts` may use `item`: `Ok` without authorization or without a
/// caller (stdio, in-process), else when its granted scopes cover the item's. The refusal
/// carries every scope the item needs in `data.requiredScopes` (the HTTP transport turns
/// it into `403` with an `insufficient_scope` challenge).
pub(crate) fn permit(settings: &Settings, parts: &Parts, item: &Item) -> Result<(), Rejection> {
    let (Some(auth), Some(caller)) = (&settings.auth, &parts.principal) else {
        return Ok(());
    };
    let required = settings.scopes_of(item);
    let missing = auth.implies.missing(caller.granted_scopes(), required);
    if missing.is_empty() {
        return Ok(());
    }
    tracing::debug!(item = %item.name, ?missing, "insufficient scope");
    Err(Rejection::new(
        ErrorClass::Forbidden,
        RpcError::invalid_request(format!(
            "insufficient scope: `{}` needs {}",
            crate::protocol::reflect(&item.name),
            required.join(" ")
        ))
        .with_data(json!({ "requiredScopes": required })),
    ))
}
