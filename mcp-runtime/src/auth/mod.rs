//! Who is calling: the server as an OAuth 2.1 resource server (HTTP only; on stdio the
//! credentials come from the environment, so there is no caller).
//!
//! [`Auth`] says which resource this server is (its canonical URI, the audience every
//! token must carry), which authorization servers issue its tokens, and how a token is
//! checked ([`TokenValidator`]: [`JwtValidator`][jwt] against the issuer's JWKS, or
//! [`Introspection`][introspection] per RFC 7662, both with feature `auth`). The HTTP
//! transport serves the RFC 9728 metadata, answers `401` with a `WWW-Authenticate`
//! challenge for a missing or invalid token, and `403 insufficient_scope` for an item
//! whose scopes the caller lacks (`#[tool(scopes("files:write"))]`). Handlers read the caller through the
//! [`Principal`] (required) or [`Caller`] (optional) extractors; `requestState`, tasks and
//! legacy sessions are bound to it.
//!
#![cfg_attr(feature = "auth", doc = "[jwt]: JwtValidator")]
#![cfg_attr(not(feature = "auth"), doc = "[jwt]: crate#features")]
#![cfg_attr(feature = "auth", doc = "[introspection]: Introspection")]
#![cfg_attr(not(feature = "auth"), doc = "[introspection]: crate#features")]

mod principal;
mod scopes;

#[cfg(feature = "auth")]
mod fetch;
#[cfg(feature = "auth")]
mod introspect;
#[cfg(feature = "auth")]
mod jwt;

pub use principal::{Caller, Principal, Token};
pub use scopes::ScopeImplies;

#[cfg(feature = "auth")]
pub use introspect::Introspection;
#[cfg(feature = "auth")]
pub use jwt::JwtValidator;

use futures_util::future::BoxFuture;
use std::sync::Arc;

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthError {
    /// The token is not valid for this server (bad signature, expired, another audience
    /// or issuer, revoked, malformed): `401` with `error="invalid_token"`. The reason is
    /// logged (rate-limited) and sent as `error_description`; it never holds the token.
    Invalid(String),
    /// The token could not be checked now (the authorization server is unreachable):
    /// `503` with `Retry-After`.
    Unavailable(String),
}

impl std::fmt::Display for AuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthError::Invalid(r) => write!(f, "invalid token: {r}"),
            AuthError::Unavailable(r) => write!(f, "token check unavailable: {r}"),
        }
    }
}

impl std::error::Error for AuthError {}

/// Checks a bearer token and says who presented it.
///
/// Two implementations ship with feature `auth`: [`JwtValidator`][jwt] (RFC 9068 JWT
/// access tokens) and [`Introspection`][introspection] (RFC 7662). Write your own for anything else; it must
/// check that the token was issued for this server (its audience).
///
#[cfg_attr(feature = "auth", doc = "[jwt]: JwtValidator")]
#[cfg_attr(not(feature = "auth"), doc = "[jwt]: crate#features")]
#[cfg_attr(feature = "auth", doc = "[introspection]: Introspection")]
#[cfg_attr(not(feature = "auth"), doc = "[introspection]: crate#features")]
pub trait TokenValidator: Send + Sync + 'static {
    /// The caller the token stands for, or why it is refused.
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>>;

    /// The audience this validator takes tokens for, when it binds them to one: building
    /// the server checks it names the same resource as [`Auth::new`]'s (a validator for the
    /// whole host must not pass tokens where the metadata names `/mcp`). `None` (the
    /// default): nothing to check.
    fn audience(&self) -> Option<&str> {
        None
    }

    /// The issuer whose tokens this validator takes, when it has one: building the server
    /// checks it is among [`Auth::authorization_server`]'s, which clients are told to get
    /// their tokens from. `None` (the default): nothing to check.
    fn issuer(&self) -> Option<&str> {
        None
    }
}

impl<F> TokenValidator for F
where
    F: Fn(&str) -> Result<Principal, AuthError> + Send + Sync + 'static,
{
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        let r = self(token);
        Box::pin(async move { r })
    }
}

/// Authorization settings: which resource this server is, who issues its tokens, how they
/// are checked, and the scopes of the items that declare none.
///
/// ```no_run
/// # #[cfg(feature = "auth")] fn f() {
/// use mcp_runtime::auth::{Auth, JwtValidator};
/// let resource = "https://mcp.example.com/mcp";
/// let issuer = "https://auth.example.com";
/// let auth = Auth::new(resource, JwtValidator::new(issuer, resource))
///     .authorization_server(issuer)
///     .scopes_supported(["mcp:read"]);
/// # }
/// ```
#[derive(Clone)]
pub struct Auth {
    pub(crate) resource: String,
    pub(crate) authorization_servers: Vec<String>,
    pub(crate) scopes_supported: Vec<String>,
    pub(crate) default_scopes: Vec<String>,
    pub(crate) resource_name: Option<String>,
    // Read by the HTTP transport (stdio has no token to check).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) validator: Arc<dyn TokenValidator>,
    pub(crate) implies: ScopeImplies,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("default_scopes", &self.default_scopes)
            .finish_non_exhaustive()
    }
}

impl Auth {
    /// This server as the resource `resource` (its canonical URI: absolute, no fragment,
    /// such as `https://mcp.example.com/mcp`), tokens checked by `validator`.
    pub fn new(resource: impl Into<String>, validator: impl TokenValidator) -> Self {
        Auth {
            resource: resource.into(),
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            default_scopes: Vec::new(),
            resource_name: None,
            validator: Arc::new(validator),
            implies: ScopeImplies::default(),
        }
    }
    /// Adds an authorization server (its issuer identifier, exactly as it publishes it) to
    /// the metadata. At least one is required.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }
    /// The scopes a client asks for to use the server at all (`scopes_supported` in the
    /// metadata and `scope` in a `401` challenge). Keep it minimal; more are asked for
    /// with `403 insufficient_scope` when an item needs them.
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }
    /// The scopes of every tool, prompt and resource that declares none of its own.
    pub fn default_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.default_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
    /// A human-readable name for the metadata's `resource_name`.
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }
    /// How a granted scope covers a required one (default: equal, or a broader scope such
    /// as `files` covering `files:read`; see [`ScopeImplies`]).
    pub fn scope_implies(mut self, implies: ScopeImplies) -> Self {
        self.implies = implies;
        self
    }

    /// The canonical URI of this server.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The URL of the RFC 9728 metadata: `/.well-known/oauth-protected-resource` inserted
    /// between the authority and the path of the resource URI.
    pub fn metadata_url(&self) -> String {
        let (origin, path) = split_origin(&self.resource);
        let path = if path == "/" { "" } else { path };
        // RFC 9728 3.1: between the host and the path and query, so the query stays.
        let query = query_of(&self.resource).map_or(String::new(), |q| format!("?{q}"));
        format!("{origin}/.well-known/oauth-protected-resource{path}{query}")
    }

    /// The path part of [`Auth::metadata_url`] (where a router serves it).
    pub fn metadata_path(&self) -> String {
        let (_, path) = split_origin(&self.resource);
        let path = if path == "/" { "" } else { path };
        format!("/.well-known/oauth-protected-resource{path}")
    }

    /// The RFC 9728 metadata document.
    pub fn metadata(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("resource".into(), self.resource.clone().into());
        m.insert(
            "authorization_servers".into(),
            self.authorization_servers.clone().into(),
        );
        if !self.scopes_supported.is_empty() {
            m.insert(
                "scopes_supported".into(),
                self.scopes_supported.clone().into(),
            );
        }
        m.insert("bearer_methods_supported".into(), vec!["header"].into());
        if let Some(n) = &self.resource_name {
            m.insert("resource_name".into(), n.clone().into());
        }
        serde_json::Value::Object(m)
    }

    /// The problems of these settings, for `Server::build()`.
    pub(crate) fn check(&self) -> Vec<String> {
        let mut errors = Vec::new();
        let r = &self.resource;
        let absolute = (r.starts_with("https://") || r.starts_with("http://"))
            && split_origin(r).0.len() > "https://".len() - 1;
        // Only the characters a URI may hold (RFC 3986), so that it goes into the
        // challenge's quoted `resource_metadata` as it is: a control character there
        // left every 401 without its `WWW-Authenticate`, a `"` broke its quoting.
        let uri_chars = r.bytes().all(|b| {
            b.is_ascii_graphic()
                && !matches!(
                    b,
                    b'"' | b'\\' | b'<' | b'>' | b'^' | b'`' | b'{' | b'|' | b'}'
                )
        });
        if !absolute || r.contains('#') || !uri_chars {
            errors.push(format!(
                "auth: the resource `{r}` must be an absolute http(s) URI without a fragment, in URI characters (RFC 3986: percent-encode the others) (the server's canonical URI, such as https://mcp.example.com/mcp)"
            ));
        }
        // The metadata is routed at a path made of the resource's (RFC 9728 3.1): the
        // router reads a segment starting with `:` or `*` as a capture (its old syntax)
        // and panics.
        let (_, path) = split_origin(r);
        if let Some(segment) = path.split('/').find(|s| s.starts_with([':', '*'])) {
            errors.push(format!(
                "auth: the resource `{r}` has a path segment `{segment}`, starting with `:` or `*`, under which the metadata cannot be routed; percent-encode that character (%3A, %2A)"
            ));
        }
        if self.authorization_servers.is_empty() {
            errors.push("auth: name at least one authorization server (`Auth::authorization_server(issuer)`); the metadata must list one".into());
        }
        for s in self.scopes_supported.iter().chain(&self.default_scopes) {
            if let Err(v) = mcp_rules::scope(s) {
                errors.push(format!("auth: {}", v.message));
            }
            if s == "offline_access" {
                errors.push(
                    "auth: `offline_access` is not a scope of this server; leave it to clients"
                        .into(),
                );
            }
        }
        // The validator takes the tokens the metadata tells clients to get: for this
        // resource, from one of the servers named.
        if let Some(aud) = self.validator.audience()
            && !same_resource(aud, r)
        {
            errors.push(format!(
                "auth: the token validator takes tokens for `{aud}`, not for the resource `{r}` the metadata names; give it the same URI"
            ));
        }
        if let Some(issuer) = self.validator.issuer()
            && !self.authorization_servers.iter().any(|a| a == issuer)
        {
            errors.push(format!(
                "auth: the token validator takes tokens of `{issuer}`, which is not among the authorization servers the metadata names; add it with `Auth::authorization_server`"
            ));
        }
        // What a client asks for first (the metadata, the 401 challenge) must let it call
        // the items that declare no scopes of their own.
        let supported = self.scopes_supported.iter().map(String::as_str);
        let missing = self.implies.missing(supported, &self.default_scopes);
        if !missing.is_empty() {
            errors.push(format!(
                "auth: the default scopes `{}` are not covered by `Auth::scopes_supported`: clients would not ask for them, and their tokens could call none of the items that declare no scopes; add them to the supported scopes",
                missing.join(" ")
            ));
        }
        errors
    }
}

/// `https://host:port` and the path (at least `/`) of an absolute URI.
pub(crate) fn split_origin(uri: &str) -> (&str, &str) {
    let after_scheme = uri.find("://").map_or(0, |i| i + 3);
    let rest = &uri[after_scheme..];
    let end = rest
        .find(['/', '?', '#'])
        .map_or(uri.len(), |i| after_scheme + i);
    let path = &uri[end..];
    let path = path.split(['?', '#']).next().unwrap_or("");
    (&uri[..end], if path.is_empty() { "/" } else { path })
}

/// The query of `uri` (after `?`, before any `#`), if it has one.
fn query_of(uri: &str) -> Option<&str> {
    let before_fragment = uri.split('#').next().unwrap_or("");
    before_fragment.split_once('?').map(|(_, q)| q)
}

/// Whether `aud` names the resource `resource`: compared as URLs (scheme and host
/// case-insensitively, a missing path equal to `/`), the path and the query byte for
/// byte (RFC 8707 2: a query may tell resources apart). A URI with a fragment names no
/// resource.
pub(crate) fn same_resource(aud: &str, resource: &str) -> bool {
    if aud.contains('#') {
        return false;
    }
    let (ao, ap) = split_origin(aud);
    let (ro, rp) = split_origin(resource);
    let strip_default = |o: &str| -> String {
        let lower = o.to_ascii_lowercase();
        lower
            .strip_suffix(":443")
            .filter(|_| lower.starts_with("https://"))
            .or_else(|| {
                lower
                    .strip_suffix(":80")
                    .filter(|_| lower.starts_with("http://"))
            })
            .map_or(lower.clone(), str::to_owned)
    };
    strip_default(ao) == strip_default(ro) && ap == rp && query_of(aud) == query_of(resource)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth(resource: &str) -> Auth {
        Auth::new(resource, |_: &str| Err(AuthError::Invalid("no".into())))
            .authorization_server("https://as.example")
    }

    #[test]
    fn the_metadata_url_inserts_the_well_known_path() {
        let a = auth("https://mcp.example.com/public/mcp");
        assert_eq!(
            a.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp"
        );
        assert_eq!(
            a.metadata_path(),
            "/.well-known/oauth-protected-resource/public/mcp"
        );
        // RFC 9728 3.1: the query stays, after the path.
        let tenant = auth("https://mcp.example.com/mcp?tenant=a");
        assert_eq!(
            tenant.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp?tenant=a"
        );
        let root = auth("https://mcp.example.com");
        assert_eq!(
            root.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        assert!(a.check().is_empty());
        assert_eq!(auth("/mcp").check().len(), 1);
        assert_eq!(auth("https://x.example/mcp#f").check().len(), 1);
        for bad in [
            "https://x.example/m\"cp",
            "https://x.example/m cp",
            "https://x.example/mcp\u{e9}",
            "https://x.example/mcp\n",
        ] {
            assert_eq!(auth(bad).check().len(), 1, "{bad}");
        }
        assert!(auth("https://x.example/mcp%C3%A9?t=a~b").check().is_empty());
    }

    /// A resource path with a segment that the router would read as a capture (`:id`,
    /// `*rest`) is refused when the server is built; the router panicked when the
    /// metadata route was added.
    #[test]
    fn a_resource_path_the_router_cannot_hold_is_refused() {
        for bad in [
            "https://x.example/:id/mcp",
            "https://x.example/mcp/*rest",
            "https://x.example/*",
        ] {
            let errors = auth(bad).check();
            assert_eq!(errors.len(), 1, "{bad}: {errors:?}");
            assert!(errors[0].contains("percent-encode"), "{bad}: {errors:?}");
        }
        for good in [
            "https://x.example/a:b/m*cp",
            "https://x.example/%3Aid/mcp",
            "https://x.example/mcp?x=:y",
        ] {
            assert!(auth(good).check().is_empty(), "{good}");
            // The router takes the metadata's path.
            #[cfg(feature = "http")]
            let _ = axum::Router::<()>::new().route(
                &auth(good).metadata_path(),
                axum::routing::get(|| async { "" }),
            );
        }
    }

    /// Default scopes that the supported ones do not cover are refused, naming them: the
    /// metadata and the 401 challenge asked for scopes that let nothing run.
    #[test]
    fn default_scopes_must_be_supported() {
        let with = |supported: &[&str], default: &[&str]| {
            auth("https://x.example/mcp")
                .scopes_supported(supported.iter().copied())
                .default_scopes(default.iter().copied())
                .check()
        };
        assert!(with(&["mcp:read", "mcp:use"], &["mcp:use"]).is_empty());
        // A broader supported scope covers a narrower default one.
        assert!(with(&["mcp"], &["mcp:use"]).is_empty());
        assert!(with(&[], &[]).is_empty());
        let errors = with(&["mcp:read"], &["mcp:use", "mcp:read", "files"]);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("`mcp:use files`"), "{errors:?}");
        assert_eq!(with(&[], &["mcp:use"]).len(), 1);
        let exact = auth("https://x.example/mcp")
            .scopes_supported(["mcp"])
            .default_scopes(["mcp:use"])
            .scope_implies(ScopeImplies::exact());
        assert_eq!(exact.check().len(), 1);
    }

    /// The validator's audience must be the resource the metadata names, and its issuer one
    /// of the authorization servers named: a validator for the whole host (`https://h`)
    /// under a resource `https://h/mcp` took tokens meant for any resource of the host.
    /// Before, nothing compared them.
    #[cfg(feature = "auth")]
    #[test]
    fn the_validator_takes_tokens_for_this_resource_from_a_server_named() {
        let r = "https://h.example/mcp";
        let with = |issuer: &str, audience: &str| {
            Auth::new(r, JwtValidator::new(issuer, audience))
                .authorization_server("https://as.example")
                .check()
        };
        assert!(with("https://as.example", r).is_empty());
        // Compared as URLs (RFC 8707), as tokens' audiences are.
        assert!(with("https://as.example", "HTTPS://h.example:443/mcp").is_empty());
        let errors = with("https://as.example", "https://h.example");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].contains("takes tokens for `https://h.example`"),
            "{errors:?}"
        );
        let errors = with("https://other.example", r);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("`https://other.example`"), "{errors:?}");
        // A validator that names neither (a closure) is not checked.
        let closure =
            |_: &str| -> Result<Principal, AuthError> { Err(AuthError::Invalid("no".into())) };
        let auth = Auth::new(r, closure).authorization_server("https://as.example");
        assert!(auth.check().is_empty());
    }

    #[cfg(feature = "auth")]
    #[test]
    fn audiences_compare_as_urls() {
        let r = "https://mcp.example.com/mcp";
        assert!(same_resource("https://mcp.example.com/mcp", r));
        assert!(same_resource("HTTPS://MCP.example.com/mcp", r));
        assert!(same_resource("https://mcp.example.com:443/mcp", r));
        assert!(!same_resource("https://mcp.example.com/MCP", r));
        assert!(!same_resource("https://mcp.example.com/mcp/", r));
        assert!(!same_resource("https://other.example/mcp", r));
        assert!(!same_resource("https://mcp.example.com.evil/mcp", r));
        assert!(same_resource("https://a.example", "https://a.example/"));
        // The query tells resources apart; a fragment names none.
        let t = "https://mcp.example.com/mcp?tenant=a";
        assert!(same_resource("https://mcp.example.com/mcp?tenant=a", t));
        assert!(!same_resource("https://mcp.example.com/mcp?tenant=b", t));
        assert!(!same_resource("https://mcp.example.com/mcp", t));
        assert!(!same_resource("https://mcp.example.com/mcp?x=1", r));
        assert!(!same_resource("https://mcp.example.com/mcp#x", r));
        assert!(!same_resource("https://mcp.example.com/mcp?", r));
    }
}
