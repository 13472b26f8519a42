//! Extractors: parameters that read the request rather than the arguments. Shared by
//! tools, prompts and resources.

use super::context::{Context, Logger, Progress, State};
use super::result::ToolError;
use std::any::TypeId;
use std::sync::Arc;

/// What a handler's extractors need from the server, checked when it is built.
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
