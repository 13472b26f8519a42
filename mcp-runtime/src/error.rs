//! The error a handler returns: tools, prompts, resources and completers alike.

use crate::protocol::{Content, RpcError};
use serde_json::Value;
use std::fmt;

/// An error from a handler (a tool, prompt, resource or list function).
///
/// Most errors are *execution* errors. From a tool, the client sees a result with
/// `isError: true` and the message as text, so the model can read it and try again; from a
/// prompt or resource, a JSON-RPC error `-32603` carrying the message. A few are *protocol*
/// errors that become a JSON-RPC error of their own, such as a missing client capability
/// (`-32021`) or an unknown resource (`-32602`).
///
/// Any `std::error::Error` converts into it with `?`, and so do a `String` message, a
/// `Box<dyn std::error::Error + Send + Sync>` and an `anyhow::Error`; [`Error::new`] makes
/// one from anything displayable.
///
/// ```
/// use mcp_runtime::{Error, tool};
///
/// /// Divides a by b.
/// #[tool]
/// async fn divide(a: f64, b: f64) -> Result<String, Error> {
///     if b == 0.0 {
///         return Err(Error::new("cannot divide by zero"));
///     }
///     Ok((a / b).to_string())
/// }
/// ```
pub struct Error(pub(crate) ErrorKind);

pub(crate) enum ErrorKind {
    /// `isError: true` with this content (from a tool), else `-32603` with its text.
    Execution(Vec<Content>),
    /// Something the handler looked for does not exist (an `io::Error` of kind
    /// `NotFound`): from a resource, the resource-not-found error for the URI being read;
    /// elsewhere an execution error with this text.
    NotFound(String),
    /// A JSON-RPC error.
    Protocol(RpcError),
}

impl Error {
    /// An execution error with this message.
    pub fn new(message: impl fmt::Display) -> Self {
        Error(ErrorKind::Execution(vec![Content::text(
            message.to_string(),
        )]))
    }

    /// An execution error with these content blocks.
    pub fn with_content(content: Vec<Content>) -> Self {
        Error(ErrorKind::Execution(content))
    }

    /// The request needs a client capability it did not declare: `-32021`, with
    /// `data.requiredCapabilities` set to `required` (for example `{"sampling": {}}`).
    pub fn missing_capability(message: impl Into<String>, required: Value) -> Self {
        Error(ErrorKind::Protocol(RpcError::missing_capability(
            message, required,
        )))
    }

    /// The resource at `uri` does not exist: `-32602` with `data.uri` (never an empty
    /// `contents`).
    pub fn resource_not_found(uri: impl Into<String>) -> Self {
        Error(ErrorKind::Protocol(RpcError::resource_not_found(
            &uri.into(),
        )))
    }

    /// Something the handler looked for does not exist. From a resource, the
    /// resource-not-found error for the URI being read (`-32602` with `data.uri`; `-32002`
    /// in 2025-11-25 sessions), so the URI need not be repeated; elsewhere an execution
    /// error with this message. An `io::Error` of kind `NotFound` converts into it.
    ///
    /// A domain error with a "not found" case maps onto it in one function, used with
    /// `.map_err` (for a type that is a `std::error::Error`, as thiserror makes it, an
    /// `impl From<MyError> for Error` conflicts with the conversion of every error):
    ///
    /// ```
    /// use mcp_runtime::{Error, resource};
    ///
    /// #[derive(Debug)]
    /// enum NoteError { Missing(u64), Locked }
    ///
    /// impl NoteError {
    ///     fn into_mcp(self) -> Error {
    ///         match self {
    ///             NoteError::Missing(id) => Error::not_found(format!("no note {id}")),
    ///             NoteError::Locked => Error::new("the notes are locked"),
    ///         }
    ///     }
    /// }
    ///
    /// fn load(id: u64) -> Result<String, NoteError> {
    ///     Err(NoteError::Missing(id))
    /// }
    ///
    /// /// A note, by number.
    /// #[resource("notes://{id}")]
    /// async fn note(id: u64) -> Result<String, Error> {
    ///     load(id).map_err(NoteError::into_mcp)
    /// }
    /// ```
    pub fn not_found(message: impl fmt::Display) -> Self {
        Error(ErrorKind::NotFound(message.to_string()))
    }

    /// A JSON-RPC error of the caller's choosing.
    pub fn protocol(error: RpcError) -> Self {
        Error(ErrorKind::Protocol(error))
    }

    /// Whether this is an execution error (`isError: true` from a tool), as opposed to a
    /// JSON-RPC error.
    pub fn is_execution_error(&self) -> bool {
        matches!(self.0, ErrorKind::Execution(_) | ErrorKind::NotFound(_))
    }

    /// This error from an item mounted under `mounts` (innermost first), read as `read`:
    /// a resource-not-found error ([`Error::resource_not_found`]) naming the module's own
    /// URI names it as this server serves it (`notes://9` → `docs+notes://9`); one naming
    /// `read` (what `Context::target` gives, served already) and anything else are
    /// unchanged.
    pub(crate) fn served_under(self, mounts: Option<&[String]>, read: Option<&str>) -> Self {
        let ErrorKind::Protocol(e) = &self.0 else {
            return self;
        };
        let Some(uri) = e.data().and_then(|d| d.get("uri")).and_then(|u| u.as_str()) else {
            return self;
        };
        if mounts.is_none_or(<[String]>::is_empty)
            || read == Some(uri)
            || *e != RpcError::resource_not_found(uri)
        {
            return self;
        }
        let served = crate::server::mount::served_uri(mounts, uri.to_owned());
        Error::protocol(RpcError::resource_not_found(&served))
    }

    /// The JSON-RPC error this becomes outside a tool: protocol errors as they are,
    /// execution errors as `-32603` with their text.
    pub(crate) fn into_rpc(self) -> RpcError {
        match self.0 {
            ErrorKind::Protocol(e) => e,
            other => RpcError::internal(Error(other).to_string()),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            ErrorKind::Execution(c) => f.debug_tuple("Execution").field(c).finish(),
            ErrorKind::NotFound(m) => f.debug_tuple("NotFound").field(m).finish(),
            ErrorKind::Protocol(e) => f.debug_tuple("Protocol").field(e).finish(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            ErrorKind::Execution(content) => {
                let mut first = true;
                for c in content {
                    if let Content::Text(t) = c {
                        if !first {
                            f.write_str("; ")?;
                        }
                        f.write_str(&t.text)?;
                        first = false;
                    }
                }
                Ok(())
            }
            ErrorKind::NotFound(m) => f.write_str(m),
            ErrorKind::Protocol(e) => fmt::Display::fmt(e, f),
        }
    }
}

/// `e`'s message, then each of its sources', `: `-separated; a source whose text is
/// already there is left out (an error whose message shows its cause, as thiserror's
/// `#[error("database failed: {0}")]` with `#[from]` does, would give it twice).
pub(crate) fn with_sources(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        next = s.source();
    }
    out
}

/// `?` on any error: its message and its sources become an execution error. That is any
/// `std::error::Error + Send + Sync + 'static`, and whatever else converts into a
/// `Box<dyn std::error::Error + Send + Sync>`: a `String` or `&str` message, such a box
/// itself, an `anyhow::Error` or an `eyre::Report` (its context chain, `: `-separated). An
/// `io::Error` of kind `NotFound` is kept apart: read from a resource, it answers with the
/// resource-not-found error for the URI (`-32602` with `data.uri`), not `-32603`.
///
/// ```
/// use mcp_runtime::Error;
///
/// fn positive(n: u32) -> Result<u32, String> {
///     if n == 0 { Err(format!("{n} is not positive")) } else { Ok(n) }
/// }
///
/// fn parse(text: &str) -> Result<u32, Error> {
///     // A `ParseIntError`, then a `String`.
///     Ok(positive(text.parse()?)?)
/// }
/// assert_eq!(parse("0").unwrap_err().to_string(), "0 is not positive");
/// assert_eq!(parse("x").unwrap_err().to_string(), "invalid digit found in string");
/// ```
impl<E: Into<Box<dyn std::error::Error + Send + Sync>>> From<E> for Error {
    fn from(e: E) -> Self {
        let e: Box<dyn std::error::Error + Send + Sync> = e.into();
        let msg = with_sources(&*e);
        let not_found = e
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound);
        if not_found {
            Error(ErrorKind::NotFound(msg))
        } else {
            Error::new(msg)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ErrorCode;

    #[test]
    fn execution_errors_become_internal_errors_outside_tools() {
        let e = Error::new("disk full");
        assert!(e.is_execution_error());
        let rpc = e.into_rpc();
        assert_eq!(rpc.code(), ErrorCode::INTERNAL_ERROR);
        assert_eq!(rpc.message(), "disk full");
        let e = Error::resource_not_found("notes://9").into_rpc();
        assert_eq!(e.code(), ErrorCode::INVALID_PARAMS);
        assert_eq!(e.data().unwrap()["uri"], "notes://9");
    }

    #[test]
    fn io_not_found_is_kept_apart() {
        let e = Error::from(std::io::Error::from(std::io::ErrorKind::NotFound));
        assert!(matches!(e.0, ErrorKind::NotFound(_)));
        assert!(e.is_execution_error());
        let e = Error::from(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        assert!(matches!(e.0, ErrorKind::Execution(_)));
    }

    #[test]
    fn sources_are_chained() {
        let io = std::io::Error::other("inner");
        assert_eq!(Error::from(io).to_string(), "inner");
        #[derive(Debug)]
        struct Outer(std::io::Error);
        impl fmt::Display for Outer {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("reading the index")
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = Error::from(Outer(std::io::Error::other("disk on fire")));
        assert_eq!(e.to_string(), "reading the index: disk on fire");
        // A message that shows its cause (thiserror's `{0}` with `#[from]`) gets it once.
        #[derive(Debug)]
        struct Shows(std::io::Error);
        impl fmt::Display for Shows {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "database failed: {}", self.0)
            }
        }
        impl std::error::Error for Shows {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = Error::from(Shows(std::io::Error::other("connection reset")));
        assert_eq!(e.to_string(), "database failed: connection reset");
    }

    /// Messages and boxed errors convert as `std::error::Error`s do: what coherence kept
    /// out while the conversion was written for `E: std::error::Error` alone.
    #[test]
    fn messages_and_boxed_errors_convert() {
        let e = Error::from("no such city");
        assert!(e.is_execution_error());
        assert_eq!(e.to_string(), "no such city");
        assert_eq!(
            Error::from(String::from("a String")).to_string(),
            "a String"
        );
        let boxed: Box<dyn std::error::Error + Send + Sync> =
            Box::new(std::io::Error::from(std::io::ErrorKind::NotFound));
        let e = Error::from(boxed);
        assert!(matches!(e.0, ErrorKind::NotFound(_)), "{e:?}");
        let boxed: Box<dyn std::error::Error + Send + Sync> = "boxed message".into();
        assert_eq!(Error::from(boxed).to_string(), "boxed message");
    }
}
