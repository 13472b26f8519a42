//! What the core hands back to a transport: the serialized answer, and, for an error,
//! its class. Each transport maps a class to its own status (HTTP statuses live in the
//! HTTP transport, not here).

use super::parts::Era;
use crate::protocol::envelope::{self, Envelope};
use crate::protocol::legacy::{self, Shape};
use crate::protocol::{ErrorCode, RequestId, RpcError};
use serde::Serialize;

/// Why a request was answered with an error, as far as a transport cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorClass {
    /// Not a valid JSON-RPC message (`-32700`, `-32600`).
    Malformed,
    /// A transport header disagrees with the body, is missing or malformed (`-32020`).
    Header,
    /// The required request `_meta` is missing or malformed (`-32602`).
    Meta,
    /// The requested protocol version is not served (`-32022`).
    Version,
    /// The request needs a client capability it did not declare (`-32021`).
    Capability,
    /// No such method, or one the server does not advertise (`-32601`).
    UnknownMethod,
    /// The server is at a capacity limit; the client may retry later.
    Busy,
    /// The caller lacks a scope the item needs (authorization).
    Forbidden,
    /// The request was understood and failed: bad params, an unknown item, a handler
    /// error, a panic or a timeout.
    Failed,
}

/// An error answer with its class.
#[derive(Debug, Clone)]
pub(crate) struct Rejection {
    pub(crate) error: RpcError,
    pub(crate) class: ErrorClass,
}

impl Rejection {
    pub(crate) fn new(class: ErrorClass, error: RpcError) -> Self {
        Rejection { error, class }
    }
    /// `-32600` for a message that is not a valid request.
    #[cold]
    pub(crate) fn malformed(detail: &str) -> Self {
        Self::new(ErrorClass::Malformed, RpcError::invalid_request(detail))
    }
    /// `-32602` about the required `_meta`.
    #[cold]
    pub(crate) fn meta(message: String) -> Self {
        Self::new(ErrorClass::Meta, RpcError::invalid_params(message))
    }
    /// `-32602` about the params of a method.
    #[cold]
    pub(crate) fn params(message: impl Into<String>) -> Self {
        Self::new(ErrorClass::Failed, RpcError::invalid_params(message))
    }
    /// The in-flight cap is reached (HTTP 503 with `Retry-After`).
    #[cold]
    pub(crate) fn busy() -> Self {
        Self::new(
            ErrorClass::Busy,
            RpcError::internal("Too many requests in flight; try again later"),
        )
    }
    /// The request bytes in flight are at their limit.
    #[cold]
    pub(crate) fn busy_bytes() -> Self {
        Self::new(
            ErrorClass::Busy,
            RpcError::internal("Too many request bytes in flight; try again later"),
        )
    }
    /// A transport's header check failed.
    #[cold]
    pub(crate) fn header(error: RpcError) -> Self {
        Self::new(ErrorClass::Header, error)
    }
    /// `-32601` for `method`, naming the versions the server serves (`supported`, as
    /// `server/discover` lists them). In a legacy session it says nothing of versions and
    /// is answered with 200 on HTTP: there a 404 tells the client its session is gone.
    #[cold]
    pub(crate) fn unknown_method(method: &str, in_session: bool, supported: &[&str]) -> Self {
        if in_session {
            let message = format!("Method not found: {}", crate::protocol::reflect(method));
            return Self::new(
                ErrorClass::Failed,
                RpcError::new(ErrorCode::METHOD_NOT_FOUND, message),
            );
        }
        Self::new(
            ErrorClass::UnknownMethod,
            RpcError::method_not_found(method, supported),
        )
    }
    /// An error from a handler (or from running it): classified by its code.
    #[cold]
    pub(crate) fn failed(error: RpcError) -> Self {
        let class = if error.code() == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY {
            ErrorClass::Capability
        } else {
            ErrorClass::Failed
        };
        Self::new(class, error)
    }
}

/// A serialized JSON-RPC response, and the class of its error if it is one.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) body: String,
    pub(crate) error: Option<ErrorClass>,
    /// The error itself, so an era can write it in its own codes.
    pub(crate) rpc: Option<Box<(Option<RequestId>, RpcError)>>,
}

impl Reply {
    /// A response carrying `result`.
    pub(crate) fn result<R: Serialize>(id: &RequestId, result: R) -> Reply {
        Reply {
            body: envelope::response(id, result),
            error: None,
            rpc: None,
        }
    }
    /// A response carrying the result in `envelope`, in the shape of `era` (`shape` says
    /// what kind of result it is, for a legacy revision).
    pub(crate) fn in_era<B: Serialize>(
        id: &RequestId,
        era: Era,
        shape: Shape,
        envelope: Envelope<'_, B>,
    ) -> Reply {
        match era {
            Era::Modern => Reply::result(id, envelope),
            Era::Legacy(version) => Reply::result(id, envelope.legacy(version, shape)),
        }
    }
    /// No answer: the request was cancelled (a legacy session's `notifications/cancelled`),
    /// and the cancelled request is not answered. On HTTP its SSE stream ends with no
    /// response (an empty one if it had not started streaming); only to a client that
    /// does not take SSE is it a bodiless 202.
    pub(crate) fn withheld() -> Reply {
        Reply {
            body: String::new(),
            error: None,
            rpc: None,
        }
    }

    /// Whether this is [`Reply::withheld`] (every answer has a body: a JSON-RPC object).
    pub(crate) fn is_withheld(&self) -> bool {
        self.body.is_empty()
    }

    /// The body to send; `None` for [`Reply::withheld`].
    pub(crate) fn into_answer(self) -> Option<String> {
        (!self.is_withheld()).then_some(self.body)
    }

    /// The answer to a message [`parse_strict`](crate::protocol::json::parse_strict)
    /// refused: `-32700` with no id; but a message refused only for a number out of
    /// `f64`'s range (which JSON allows) or a member name given twice is JSON, and its id
    /// may be readable: then it gets `-32602` (the number) or `-32600` (the name) with its
    /// id (MSG-04: an error carries the id whenever it can be read). On HTTP the number
    /// is a 200, as other `-32602`s past the spec-fixed ones (requirements, Ambiguity 5):
    /// a 400 without a modern code makes a dual-era client fall back to `initialize`
    /// (ERA-03).
    #[cold]
    pub(crate) fn unparsable(bytes: &[u8], e: crate::protocol::json::ParseError) -> Reply {
        let readable = e.is_number_out_of_range() || e.is_duplicate_member();
        if readable && let Some(id) = crate::protocol::json::readable_id(bytes) {
            let rejection = if e.is_number_out_of_range() {
                Rejection::params(
                    "a number in the message is out of range (beyond what a 64-bit float holds)",
                )
            } else {
                Rejection::new(ErrorClass::Malformed, RpcError::invalid_request(e))
            };
            return Reply::rejection(Some(&id), rejection);
        }
        Reply::rejection(
            None,
            Rejection::new(ErrorClass::Malformed, RpcError::parse_error(e)),
        )
    }

    /// An error response; `id` is left out when it could not be read.
    #[cold]
    pub(crate) fn rejection(id: Option<&RequestId>, rejection: Rejection) -> Reply {
        Reply {
            body: envelope::error_response(id, &rejection.error),
            error: Some(rejection.class),
            rpc: Some(Box::new((id.cloned(), rejection.error))),
        }
    }
    /// The reply as a legacy client expects it: an error in the legacy codes
    /// ([`legacy::recode`]); a result is written in its era already.
    pub(crate) fn into_legacy(self) -> Reply {
        match self.rpc {
            None => self,
            Some(b) => {
                let (id, error) = *b;
                let before = error.code();
                let error = legacy::recode(error);
                // A code only 2026-07-28 has, made `-32603`, is no longer of its class
                // (a missing capability's 400, say): it fails like any request.
                let class = match error.code() == before {
                    true => self.error,
                    false => self.error.map(|_| ErrorClass::Failed),
                };
                Reply {
                    body: envelope::error_response(id.as_ref(), &error),
                    error: class,
                    rpc: Some(Box::new((id, error))),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handler_errors_are_classified_by_code() {
        let cap = RpcError::missing_capability("x", serde_json::json!({"sampling": {}}));
        assert_eq!(Rejection::failed(cap).class, ErrorClass::Capability);
        assert_eq!(
            Rejection::failed(RpcError::internal("x")).class,
            ErrorClass::Failed
        );
        let r = Reply::rejection(None, Rejection::malformed("`jsonrpc` must be \"2.0\""));
        assert_eq!(r.error, Some(ErrorClass::Malformed));
        assert!(
            r.body
                .starts_with(r#"{"jsonrpc":"2.0","error":{"code":-32600"#)
        );
    }
}
