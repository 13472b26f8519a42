//! A protected server: an OAuth 2.1 resource server whose tools need tokens from an
//! authorization server, and one tool that needs a wider scope.
//!
//! ```text
//! MCP_AUTH_ISSUER=https://your-tenant.example.com cargo run --example protected
//! ```
//!
//! Settings (environment):
//! - `MCP_AUTH_ISSUER` (required): the authorization server's issuer identifier, exactly
//!   as its metadata names it. Its JWKS is found through that metadata.
//! - `MCP_RESOURCE`: this server's canonical URI, the audience its tokens carry (default
//!   `http://<the bound address>/mcp`; set it to the public URL behind a proxy).
//! - `MCP_INTROSPECTION_CLIENT_ID` / `MCP_INTROSPECTION_CLIENT_SECRET`: check opaque
//!   tokens by introspection (RFC 7662) instead of JWTs.
//! - `MCP_AUTH_ACCEPT_ANY_TYP=1`: accept JWTs without the RFC 9068 `typ: at+jwt` header
//!   (for authorization servers that sign access tokens as plain `JWT`, such as Keycloak).
//! - `PORT` (default 8080), on 127.0.0.1.

use mcp_runtime::auth::{Auth, JwtValidator, Principal};
use mcp_runtime::{Server, tool, tools};
use std::sync::Mutex;

/// Who you are, as the token says.
#[tool(annotations(read_only_hint = true))]
async fn whoami(caller: Principal) -> String {
    let scopes: Vec<&str> = caller.granted_scopes().collect();
    format!("{} ({})", caller.subject(), scopes.join(" "))
}

/// The notes kept so far.
#[tool(annotations(read_only_hint = true))]
async fn list_notes(notes: mcp_runtime::State<Notes>) -> String {
    notes.0.lock().map(|n| n.join("\n")).unwrap_or_default()
}

/// Keeps a note (needs the `mcp:write` scope).
#[tool(scopes("mcp:write"))]
async fn add_note(notes: mcp_runtime::State<Notes>, caller: Principal, text: String) -> String {
    let line = format!("{}: {text}", caller.subject());
    if let Ok(mut n) = notes.0.lock() {
        n.push(line.clone());
    }
    format!("kept \"{line}\"")
}

#[derive(Default)]
struct Notes(Mutex<Vec<String>>);

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    mcp_runtime::telemetry::init();
    let issuer = std::env::var("MCP_AUTH_ISSUER")
        .map_err(|_| "set MCP_AUTH_ISSUER to your authorization server's issuer URL")?;
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let resource = std::env::var("MCP_RESOURCE")
        .unwrap_or_else(|_| format!("http://{}/mcp", listener.local_addr().unwrap()));
    let auth = match (
        std::env::var("MCP_INTROSPECTION_CLIENT_ID"),
        std::env::var("MCP_INTROSPECTION_CLIENT_SECRET"),
    ) {
        (Ok(id), Ok(secret)) => Auth::new(
            &resource,
            mcp_runtime::auth::Introspection::new(&issuer, &resource, id, secret),
        ),
        _ => {
            let mut jwt = JwtValidator::new(&issuer, &resource);
            if std::env::var("MCP_AUTH_ACCEPT_ANY_TYP").is_ok_and(|v| v == "1") {
                jwt = jwt.accept_any_typ();
            }
            Auth::new(&resource, jwt)
        }
    };
    let server = Server::builder("protected", env!("CARGO_PKG_VERSION"))
        .tools(tools![whoami, list_notes, add_note])
        .state(Notes::default())
        .auth(
            auth.authorization_server(&issuer)
                .scopes_supported(["mcp:read"]),
        )
        .build()?;
    tracing::info!(%resource, %issuer, "protected resource");
    server
        .http()
        .serve(listener, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
