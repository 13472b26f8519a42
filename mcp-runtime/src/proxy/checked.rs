//! What an upstream answered, as this server passes it on: its JSON-RPC errors in the
//! codes this server may send, and a tool's result held to the output schema served for
//! it.

use super::link::{Link, UpstreamError};
use crate::Error;
use crate::protocol::{CallToolResult, RpcError};
use serde_json::Value;

/// An upstream tool's successful result, checked against the output schema served for
/// it (TOOL-14): without `structuredContent`, or with one that does not match, it is the
/// tool's error, not passed on as a success that breaks the schema. That error does not
/// say what the result held (the validator's message quotes it): that goes to the log,
/// told by `link`.
pub(super) fn meets_output_schema(
    link: &Link,
    schema: &crate::schema::ArgumentValidator,
    result: CallToolResult,
) -> Result<CallToolResult, Error> {
    if result.is_error == Some(true) {
        return Ok(result);
    }
    match &result.structured_content {
        // `null` (which reads as none) is a structured result when the schema allows it.
        None if schema.validate(&Value::Null).is_ok() => Ok(result),
        None => Err(Error::new(
            "the upstream server's result has no structuredContent, though its tool declares an outputSchema",
        )),
        Some(structured) => match schema.validate(structured) {
            Ok(()) => Ok(result),
            Err(why) => {
                link.tell(format_args!(
                    "the upstream server's result does not match its output schema: {why}"
                ));
                Err(Error::new(
                    "the upstream server's result does not match its output schema",
                ))
            }
        },
    }
}

/// An upstream failure as the handler's error: an unreachable upstream is an execution
/// error (for a tool, an `isError` result the model reads); a JSON-RPC error of the
/// upstream is [`relayed`].
pub(super) fn failed(e: UpstreamError) -> Error {
    match e {
        UpstreamError::Rpc {
            code,
            message,
            data,
        } => Error::protocol(relayed(code, message, data)),
        other => Error::new(format!("the upstream server is unavailable: {other}")),
    }
}

/// An upstream's JSON-RPC error as this server's: what speaks of the client's request
/// (`-32602`, `-32603`, a `-32021` naming the capabilities, application codes) passes
/// through; the legacy resource-not-found (`-32002`) is `-32602`; the rest is about the
/// request this server made upstream (`-32700`, `-32600`, `-32601`, `-32020`, `-32022`),
/// or a code this server must not send (the others of `-32768..=-32000`, such as
/// `-32042`), so it is `-32603` naming the upstream's code.
fn relayed(code: i32, message: String, data: Option<Value>) -> RpcError {
    use crate::protocol::ErrorCode;
    let requires_capabilities = data
        .as_ref()
        .is_some_and(|d| d.get("requiredCapabilities").is_some_and(Value::is_object));
    let passes = match code {
        -32602 | -32603 => true,
        -32021 => requires_capabilities,
        c => ErrorCode::application(c).is_some(),
    };
    if passes {
        let e = RpcError::new(ErrorCode::from_wire(code), message);
        return match data {
            Some(d) => e.with_data(d),
            None => e,
        };
    }
    if code == crate::protocol::legacy::RESOURCE_NOT_FOUND {
        return RpcError::invalid_params(message);
    }
    RpcError::internal(format!(
        "the upstream server failed ({code}): {}",
        crate::protocol::reflect(&message)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn relay(code: i32, data: Option<Value>) -> (i32, String, Option<Value>) {
        let e = relayed(code, "upstream said no".into(), data);
        let v = serde_json::to_value(&e).unwrap_or_default();
        (
            e.code().get(),
            e.message().to_owned(),
            v.get("data").cloned(),
        )
    }

    #[test]
    fn upstream_errors_are_relayed_only_with_codes_this_server_may_send() {
        // What concerns the client's request passes, with its data.
        assert_eq!(
            relay(-32602, Some(json!({"x": 1}))).2,
            Some(json!({"x": 1}))
        );
        assert_eq!(relay(-32603, None).0, -32603);
        assert_eq!(relay(7, None), (7, "upstream said no".into(), None));
        let caps = json!({"requiredCapabilities": {"sampling": {}}});
        assert_eq!(relay(-32021, Some(caps.clone())).2, Some(caps));
        // The legacy not found is this revision's.
        assert_eq!(relay(-32002, Some(json!({"uri": "x://y"}))).0, -32602);
        // The rest is this server's internal error, naming the upstream's code.
        for code in [
            -32700, -32600, -32601, -32020, -32022, -32042, -32001, -32099, -32021,
        ] {
            let (c, message, data) = relay(code, Some(json!({"supported": ["1999-01-01"]})));
            assert_eq!(c, -32603, "{code}");
            assert!(message.contains(&code.to_string()), "{message}");
            assert_eq!(data, None, "{code}");
        }
    }
}
