//! Authorization at the HTTP transport: the bearer token of each request, the `401`
//! and `403` challenges (RFC 6750, RFC 9728) and the protected-resource metadata.

use super::refuse;
use crate::auth::{Auth, AuthError, Principal};
use crate::protocol::RpcError;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// The scopes a refused call needed, left on its response for the challenge.
#[derive(Clone)]
pub(super) struct NeedsScopes(pub(super) Vec<String>);

/// The caller of a request, or the answer refusing it: `401` for a missing or invalid
/// token, `400` for two `Authorization` headers, `503` when the token cannot be checked.
pub(super) async fn authenticate(
    auth: &Auth,
    headers: &HeaderMap,
    retry_after: u64,
) -> Result<Arc<Principal>, Response> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let value = match (values.next(), values.next()) {
        (None, _) => return Err(unauthorized(auth, None)),
        (Some(_), Some(_)) => {
            let mut r = refuse(
                StatusCode::BAD_REQUEST,
                RpcError::invalid_request("more than one Authorization header"),
            );
            set_challenge(
                &mut r,
                auth,
                Some(("invalid_request", "more than one Authorization header")),
                None,
            );
            return Err(r);
        }
        (Some(v), None) => v,
    };
    // `Bearer <token68>`; any other scheme counts as no credentials. Read as bytes: a
    // bearer credential with bytes beyond visible ASCII is a malformed token, not none.
    let bytes = value.as_bytes();
    let token = bytes
        .iter()
        .position(|&b| b == b' ')
        .filter(|&at| bytes[..at].eq_ignore_ascii_case(b"bearer"))
        .map(|at| bytes[at + 1..].trim_ascii());
    let Some(token) = token else {
        return Err(unauthorized(auth, None));
    };
    let token = match std::str::from_utf8(token) {
        Ok(t) if !t.is_empty() && t.bytes().all(is_token68) => t,
        _ => return Err(unauthorized(auth, Some("the bearer token is malformed"))),
    };
    match auth.validator.validate(token).await {
        Ok(p) => Ok(Arc::new(p)),
        Err(AuthError::Invalid(why)) => {
            warn_limited(&format!("token refused: {why}"));
            Err(unauthorized(auth, Some(&why)))
        }
        Err(AuthError::Unavailable(why)) => {
            warn_limited(&format!("token could not be checked: {why}"));
            let mut r = refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                RpcError::internal("the access token cannot be checked now; try again later"),
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
            Err(r)
        }
    }
}

fn is_token68(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
}

/// `401` with the challenge: `error="invalid_token"` only when a token was sent.
fn unauthorized(auth: &Auth, invalid: Option<&str>) -> Response {
    let message = match invalid {
        None => "Unauthorized: this server needs an OAuth access token (see WWW-Authenticate)"
            .to_owned(),
        Some(why) => format!("Unauthorized: {why}"),
    };
    let mut r = refuse(StatusCode::UNAUTHORIZED, RpcError::invalid_request(message));
    set_challenge(&mut r, auth, invalid.map(|w| ("invalid_token", w)), None);
    r
}

/// Adds the `403 insufficient_scope` challenge to a response that refused a call for its
/// scopes.
pub(super) fn insufficient_scope(resp: &mut Response, auth: &Auth, needed: &[String]) {
    set_challenge(
        resp,
        auth,
        Some((
            "insufficient_scope",
            "the access token lacks a scope this call needs",
        )),
        Some(needed),
    );
}

/// `WWW-Authenticate: Bearer [error=.., error_description=..,] scope="..", resource_metadata=".."`.
fn set_challenge(
    resp: &mut Response,
    auth: &Auth,
    error: Option<(&str, &str)>,
    scopes: Option<&[String]>,
) {
    let mut parts = Vec::new();
    if let Some((code, why)) = error {
        parts.push(format!("error=\"{code}\""));
        parts.push(format!("error_description=\"{}\"", quotable(why)));
    }
    let scopes = scopes.unwrap_or(&auth.scopes_supported);
    if !scopes.is_empty() {
        parts.push(format!("scope=\"{}\"", scopes.join(" ")));
    }
    parts.push(format!("resource_metadata=\"{}\"", auth.metadata_url()));
    let value = format!("Bearer {}", parts.join(", "));
    if let Ok(v) = HeaderValue::from_str(&value) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
}

/// Text safe inside a quoted `error_description` (RFC 6750: no `"` or `\`, printable).
fn quotable(s: &str) -> String {
    s.chars()
        .filter(|c| matches!(c, ' '..='~') && *c != '"' && *c != '\\')
        .take(200)
        .collect()
}

/// The RFC 9728 metadata document.
pub(super) fn metadata(auth: &Auth) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
            (header::CACHE_CONTROL, "max-age=3600"),
        ],
        auth.metadata().to_string(),
    )
        .into_response()
}

/// A warning at most every ten seconds, with how many were held back.
fn warn_limited(message: &str) {
    static WARNINGS: crate::telemetry::Throttle =
        crate::telemetry::Throttle::every(std::time::Duration::from_secs(10));
    match WARNINGS.admit() {
        Some(held) => tracing::warn!(suppressed = held, "{message}"),
        None => tracing::debug!("{message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_quoted_and_clean() {
        assert_eq!(quotable("a \"b\" \\c\u{7}é"), "a b c");
    }
}
