//! Extractors: parameters that read the request rather than the arguments. Shared by
//! tools, prompts and resources.

use super::context::{Context, Logger, Progress, State};
use super::result::ToolError;
use std::any::TypeId;
use std::sync::Arc;

/// What a handler's extractors need from the server, checked when it is built.
///
/// ```
/// use mcp_runtime::{Server, Signature, ToolDef, ToolError};
///
/// struct Db;
///
/// let mut signature = Signature::new();
/// signature.requirements().requires_state::<Db>();
/// let count = ToolDef::new("count", signature, |_call| async { Ok::<_, ToolError>("0") })
///     .description("Counts rows.");
/// // Checked when the server is built: no `Db` was given with `.state(..)`.
/// assert!(Server::builder("x", "1.0").tool(count).build().is_err());
/// ```
#[derive(Debug, Default, Clone)]
pub struct Requirements {
    pub(crate) uses_logging: bool,
    pub(crate) uses_input: bool,
    pub(crate) required_state: Vec<(TypeId, &'static str)>,
}

impl Requirements {
    /// The handler may send `notifications/message` (the server then advertises `logging`).
    pub fn uses_logging(&mut self) {
        self.uses_logging = true;
    }
    /// The handler may ask the client for input (multi round-trip requests).
    pub fn uses_input(&mut self) {
        self.uses_input = true;
    }
    /// The handler needs shared state of type `T` (given with `ServerBuilder::state`).
    pub fn requires_state<T: 'static>(&mut self) {
        self.required_state
            .push((TypeId::of::<T>(), std::any::type_name::<T>()));
    }
}

/// A parameter that reads the request (not the arguments): [`Context`], [`Progress`],
/// [`Logger`], [`State<T>`].
///
/// ```
/// use mcp_runtime::{Context, FromRequest, Requirements, Server, State, ToolError};
/// use mcp_runtime::{resource, resources};
///
/// struct Config {
///     tenant: String,
/// }
///
/// /// The tenant this server serves, read from the shared `Config`.
/// struct Tenant(String);
///
/// impl FromRequest for Tenant {
///     fn requirements(requirements: &mut Requirements) {
///         requirements.requires_state::<Config>();
///     }
///     fn from_request(cx: &Context) -> Result<Self, ToolError> {
///         Ok(Tenant(State::<Config>::from_request(cx)?.tenant.clone()))
///     }
/// }
///
/// /// The tenant's name.
/// #[resource("tenant://name")]
/// async fn tenant_name(tenant: Tenant) -> String {
///     tenant.0
/// }
///
/// let config = Config { tenant: "acme".into() };
/// let server = Server::builder("x", "1.0").state(config).resources(resources![tenant_name]).build();
/// assert!(server.is_ok());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an extractor",
    label = "not an extractor",
    note = "extractors are `Context`, `Progress`, `Logger`, `Input` and `State<T>`; a resource parameter that is not an extractor must be named after a variable of the URI template (`{{id}}` → `id: u64`)"
)]
pub trait FromRequest: Sized + Send {
    /// Records what the extractor needs from the server.
    fn requirements(requirements: &mut Requirements) {
        let _ = requirements;
    }
    /// Produces the value for one request.
    fn from_request(cx: &Context) -> Result<Self, ToolError>;
}

impl FromRequest for Context {
    fn from_request(cx: &Context) -> Result<Self, ToolError> {
        Ok(cx.clone())
    }
}

impl FromRequest for Progress {
    fn from_request(cx: &Context) -> Result<Self, ToolError> {
        Ok(Progress(Arc::clone(&cx.0)))
    }
}

impl FromRequest for Logger {
    fn requirements(requirements: &mut Requirements) {
        requirements.uses_logging();
    }
    fn from_request(cx: &Context) -> Result<Self, ToolError> {
        Ok(Logger(Arc::clone(&cx.0)))
    }
}

impl<T: Send + Sync + 'static> FromRequest for State<T> {
    fn requirements(requirements: &mut Requirements) {
        requirements.requires_state::<T>();
    }
    fn from_request(cx: &Context) -> Result<Self, ToolError> {
        cx.0.extensions.get::<T>().map(State).ok_or_else(|| {
            ToolError::protocol(crate::protocol::RpcError::internal("server state missing"))
        })
    }
}

impl FromRequest for crate::mrtr::Input {
    fn requirements(requirements: &mut Requirements) {
        requirements.uses_input();
    }
    fn from_request(cx: &Context) -> Result<Self, ToolError> {
        cx.0.input.clone().map(crate::mrtr::Input).ok_or_else(|| {
            ToolError::protocol(crate::protocol::RpcError::internal(
                "input can only be asked for in tools/call, prompts/get and resources/read",
            ))
        })
    }
}
