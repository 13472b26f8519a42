//! [`Call<K>`]: one request to a handler, handed to each of its parameters in turn.

use super::extract::FromRequest;
use super::kind::{self, Kind};
use super::signature::Param;
use crate::server::context::{Context, Request};
use crate::{Error, Input};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;

/// One call of a handler of kind `K`: what the request sent for it, and the request.
///
/// Parameters take their values from it ([`FromRequest`]); a hand-written handler does the
/// same through [`Call::argument`].
///
/// ```
/// use mcp_runtime::Error;
/// use mcp_runtime::def::ToolDef;
/// use mcp_runtime::handler::{Call, Param, Signature};
/// use mcp_runtime::kind::Tool;
///
/// const TEXT: Param = Param::new("text");
/// let mut signature = Signature::new();
/// signature.add_argument::<String>(&TEXT);
/// let echo = ToolDef::new("echo", signature, |mut call: Call<Tool>| async move {
///     let text: String = call.argument("text")?;
///     Ok::<_, Error>(format!("{text} (request {})", call.context().request_id()))
/// });
/// assert_eq!(echo.name(), "echo");
/// ```
pub struct Call<K: Kind> {
    /// Tool arguments as sent; prompt arguments and resource template variables as
    /// strings.
    pub(crate) arguments: Map<String, Value>,
    pub(crate) request: Arc<Request>,
    /// A resource read's template variables read as lists: their items, as the URI
    /// template matched them (split before percent-decoding).
    pub(crate) lists: BTreeMap<String, Vec<String>>,
    pub(crate) kind: PhantomData<fn() -> K>,
}

impl<K: Kind> Call<K> {
    pub(crate) fn new(arguments: Map<String, Value>, request: Arc<Request>) -> Self {
        Call {
            arguments,
            request,
            lists: BTreeMap::new(),
            kind: PhantomData,
        }
    }

    /// The request context.
    pub fn context(&self) -> Context {
        Context(Arc::clone(&self.request))
    }

    /// The request's [`Input`], to ask the client for more.
    pub fn input(&self) -> Result<Input, Error> {
        self.request.input.clone().ok_or_else(|| {
            Error::protocol(crate::protocol::RpcError::internal(
                "input can only be asked for by a handler that declares it uses input",
            ))
        })
    }

    /// Takes the value of parameter `name` (an argument, a template variable, or an
    /// extractor), as a macro-generated handler does.
    pub fn argument<T: FromRequest<K>>(&mut self, name: &'static str) -> Result<T, Error> {
        T::from_request(self, &Param::new(name))
    }

    /// Whether the call has the argument `name` (not taken yet): a parameter with
    /// `#[arg(default ..)]` takes its default when it does not.
    pub fn has_argument(&self, name: &str) -> bool {
        self.arguments.contains_key(name)
    }

    /// Takes the raw argument `name` out of the call (it can be taken once).
    pub fn take_argument(&mut self, name: &str) -> Option<Value> {
        self.arguments.remove(name)
    }

    /// What the call is for: the tool or prompt name, or the resource URI.
    pub fn target(&self) -> Target<'_> {
        Target::of(&self.request)
    }
}

impl Call<kind::Resource> {
    /// Parses the template variable `name` into `T` (percent-decoded already).
    ///
    /// A `Vec<T>` takes the items of a list, split before percent-decoding (so `a%2Cb` is one
    /// item, `a,b`): those of an exploded variable (`{/segs*}` reads `/a/b` as `["a", "b"]`,
    /// `{.ext*}` splits at `.`, `{ids*}` at `,`), another variable's split at its raw `,`
    /// (`{/ids}` reads `/a,b%2Cc` as `["a", "b,c"]`); empty items are left out. A `String`
    /// takes the whole value (`a/b`, `a,b,c`). A
    /// variable the URI leaves undefined (RFC 6570 expands it to nothing: `b://` for
    /// `b://{id}`, `c://x` for `c://x{/segs*}`, an absent query variable) is `None` for an
    /// `Option<T>` and an empty list for a `Vec<T>`.
    ///
    /// A value that does not parse as `T`, or an undefined variable of another type, is
    /// `-32602` Invalid params naming the variable and the type, with `data.uri`: the URI
    /// matched the template, so the resource is not missing; its value is wrong.
    pub fn variable<T: serde::de::DeserializeOwned>(&mut self, name: &str) -> Result<T, Error> {
        let invalid = |e: String| {
            let uri = self.request.target.as_deref().unwrap_or_default();
            Error::protocol(
                crate::protocol::RpcError::invalid_params(format!(
                    "invalid `{name}` in the resource URI: {e}"
                ))
                .with_data(serde_json::json!({ "uri": uri })),
            )
        };
        match self.arguments.remove(name) {
            Some(Value::String(s)) => match self.lists.remove(name) {
                Some(items) => super::plain::from_items(&s, &items).map_err(invalid),
                None => super::plain::from_str(&s).map_err(invalid),
            },
            Some(_) => Err(invalid("not text".into())),
            None => super::plain::undefined().map_err(|_| {
                let ty = super::plain::type_label::<T>();
                invalid(format!(
                    "the URI leaves it undefined, and it must be a {ty}"
                ))
            }),
        }
    }
}

/// What a request is for, as results are made for it: the tool or prompt name, or the
/// resource URI and its declared MIME type.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    name: &'a str,
    mime_type: Option<&'a str>,
}

impl<'a> Target<'a> {
    pub(crate) fn of(request: &'a Request) -> Self {
        Target {
            name: request.target.as_deref().unwrap_or_default(),
            mime_type: request.mime_type.as_deref(),
        }
    }

    /// A target, for converting results by hand (in tests).
    pub fn new(name: &'a str, mime_type: Option<&'a str>) -> Self {
        Target { name, mime_type }
    }

    /// The tool or prompt name, or the resource URI being read.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The resource URI being read (the same as [`Target::name`]).
    pub fn uri(&self) -> &'a str {
        self.name
    }

    /// The MIME type the resource declares, if any.
    pub fn mime_type(&self) -> Option<&'a str> {
        self.mime_type
    }
}
