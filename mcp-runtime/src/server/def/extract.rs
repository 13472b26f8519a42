//! [`FromRequest<K>`]: how a handler parameter gets its value. Arguments (tool arguments,
//! prompt arguments) and extractors (parameters that read the request) are told apart by
//! trait, never by the type's spelling.

use super::call::Call;
use super::kind::{self, Kind};
use super::signature::{Missing, Param, Signature};
use crate::protocol::RpcError;
use crate::server::context::{Context, Logger, Progress, State};
use crate::{Error, Input};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A type a handler of kind `K` can take as a parameter.
///
/// - **Arguments**: for a tool, any `T: Deserialize + JsonSchema` (a property of its
///   `inputSchema`, read from `arguments` under the parameter's name); for a prompt, any
///   `T: Deserialize` (a string argument parsed into `T`). `Option<T>` is not required.
///   A resource has no arguments: its parameters named after a variable of the URI
///   template are parsed from the URI ([`Call::variable`]: lists split at the template's
///   separator, and an undefined variable is `None` or an empty list).
/// - **Extractors**: [`Context`], [`Progress`], [`Logger`], [`State<T>`], [`Input`],
///   [`Handles`](crate::store::Handles), or your
///   own type implementing this trait for every kind (`impl<K: Kind> FromRequest<K>`).
///   They read the request, not the arguments, and add nothing to the schema.
///
/// ```
/// use mcp_runtime::handler::{Call, FromRequest};
/// use mcp_runtime::kind::Kind;
/// use mcp_runtime::{Error, Server, tool, tools};
///
/// /// The caller's trace id, or `none`.
/// struct TraceId(String);
///
/// impl<K: Kind> FromRequest<K> for TraceId {
///     fn from_request(call: &mut Call<K>, _: &mcp_runtime::handler::Param) -> Result<Self, Error> {
///         let trace = call.context().trace_context().map(|t| t.trace_id.clone());
///         Ok(TraceId(trace.unwrap_or_else(|| "none".into())))
///     }
/// }
///
/// /// Echoes the caller's trace id.
/// #[tool]
/// async fn trace(id: TraceId) -> String {
///     id.0
/// }
///
/// let server = Server::builder("x", "1.0").tools(tools![trace]).build().unwrap();
/// assert_eq!(server.tool_names(), ["trace"]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is neither an argument nor an extractor",
    label = "not an argument or an extractor",
    note = "a tool argument implements `serde::Deserialize` and `schemars::JsonSchema`; a prompt argument implements `serde::Deserialize` (parsed from text); a resource parameter is named after a variable of its URI template (`{{id}}` → `id: u64`) or is an extractor",
    note = "extractors are `Context`, `Progress`, `Logger`, `Input`, `State<T>`, `Handles`, `Layered<T>` and types implementing `FromRequest`",
    note = "`State<T>` needs `T: Send + Sync + 'static`: requests running at once share it; put what is not `Sync` (a `RefCell`, a `Cell`) behind a `Mutex`, and use `Arc` for `Rc`"
)]
pub trait FromRequest<K: Kind>: Sized + Send {
    /// Adds what this parameter contributes to the definition (a schema property, a
    /// prompt argument, a requirement on the server). Nothing by default.
    fn describe(param: &Param, signature: &mut Signature) {
        let _ = (param, signature);
    }

    /// Produces the value for one call.
    fn from_request(call: &mut Call<K>, param: &Param) -> Result<Self, Error>;
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema + Send + 'static> FromRequest<kind::Tool> for T {
    fn describe(param: &Param, signature: &mut Signature) {
        signature.add_argument::<T>(param);
    }

    fn from_request(call: &mut Call<kind::Tool>, param: &Param) -> Result<Self, Error> {
        let result = match call.arguments.remove(param.name) {
            Some(v) => match floats(&v) {
                // JSON Schema counts `3.0` as an integer (and the schema passed it), serde
                // does not: a value with such numbers that does not deserialize as it is
                // is tried again with them as integers (read in place first: no copy),
                // and what is wrong then is what is said.
                Floats::Safe => match T::deserialize(&v) {
                    Ok(t) => Ok(t),
                    Err(_) => {
                        // What serde can still refuse in it, `integral` left as it was.
                        let v = integral(v);
                        T::deserialize(&v).map_err(|e| explain(&e, &v))
                    }
                },
                // Read in place, to name the number serde refuses.
                Floats::Past => T::deserialize(&v).map_err(|e| explain(&e, &v)),
                Floats::None => T::deserialize(v).map_err(|e| e.to_string()),
            },
            None => T::deserialize(Missing).map_err(|_| "missing required argument".to_owned()),
        };
        result.map_err(|e| Error::new(format!("Invalid argument `{}`: {e}", param.name)))
    }
}

/// What integral floats (`3.0`, `1e19`) a value holds; one below 2^53 decides.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Floats {
    None,
    /// Only ones of 2^53 or more, where a float stands for several integers.
    Past,
    /// At least one below 2^53, which is taken for its integer.
    Safe,
}

/// Whether `n` is an integral float, and then whether it stands for one integer.
fn integral_float(n: &serde_json::Number) -> Option<bool> {
    let f = n.as_f64().filter(|f| n.is_f64() && f.fract() == 0.0)?;
    Some(f.abs() < crate::schema::EXACT_FLOATS)
}

/// The integral floats of `v`, in one walk that stops at the first below 2^53.
fn floats(v: &Value) -> Floats {
    let mut found = Floats::None;
    let mut see = |v: &Value| {
        found = match floats(v) {
            Floats::None => found,
            other => other,
        };
        found == Floats::Safe
    };
    match v {
        Value::Number(n) => match integral_float(n) {
            Some(true) => Floats::Safe,
            Some(false) => Floats::Past,
            None => Floats::None,
        },
        Value::Array(a) => {
            a.iter().any(&mut see);
            found
        }
        Value::Object(o) => {
            o.values().any(&mut see);
            found
        }
        _ => Floats::None,
    }
}

/// serde's refusal of `v`, or, when the float it refuses ("invalid type: floating point
/// `10000000000000000000.0`, expected u64") is integral and 2^53 or more (`1e19`, or an
/// integer past 64 bits, which serde_json reads as a float), why: such a float stands for
/// several integers, so no integer type takes it.
fn explain(e: &serde_json::Error, v: &Value) -> String {
    let said = e.to_string();
    let refused = said
        .split_once("floating point `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .and_then(|(number, _)| number.parse::<f64>().ok());
    match refused.and_then(|f| float_written(v, f)) {
        Some(n) if integral_float(n) == Some(false) => format!(
            "{n} is written as a float of 2^53 or more, where a float stands for several \
             integers; write the integer's digits"
        ),
        _ => said,
    }
}

/// The float of `v` equal to `f`, as the client wrote it.
fn float_written(v: &Value, f: f64) -> Option<&serde_json::Number> {
    match v {
        Value::Number(n) => (n.is_f64() && n.as_f64() == Some(f)).then_some(n),
        Value::Array(a) => a.iter().find_map(|v| float_written(v, f)),
        Value::Object(o) => o.values().find_map(|v| float_written(v, f)),
        _ => None,
    }
}

/// `v` with each integral float below 2^53 made an integer.
fn integral(v: Value) -> Value {
    match v {
        Value::Number(n) if integral_float(&n) == Some(true) => {
            let f = n.as_f64().unwrap_or_default();
            match f < 0.0 {
                true => Value::from(f as i64),
                false => Value::from(f as u64),
            }
        }
        Value::Array(a) => Value::Array(a.into_iter().map(integral).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, integral(v))).collect()),
        other => other,
    }
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + Send> FromRequest<kind::Prompt> for T {
    fn describe(param: &Param, signature: &mut Signature) {
        signature.add_text_argument::<T>(param);
    }

    fn from_request(call: &mut Call<kind::Prompt>, param: &Param) -> Result<Self, Error> {
        let invalid = |e: String| {
            Error::protocol(RpcError::invalid_params(format!(
                "invalid argument `{}`: {e}",
                param.name
            )))
        };
        match call.arguments.remove(param.name) {
            Some(Value::String(s)) => super::plain::from_str(&s).map_err(invalid),
            Some(_) => Err(invalid("not a string".into())),
            None => {
                T::deserialize(Missing).map_err(|_| invalid("missing required argument".into()))
            }
        }
    }
}

impl<K: Kind> FromRequest<K> for Context {
    fn from_request(call: &mut Call<K>, _: &Param) -> Result<Self, Error> {
        Ok(call.context())
    }
}

/// The caller, when the request carried a valid token (`None` on stdio and without
/// [`Auth`](crate::auth::Auth)).
impl<K: Kind> FromRequest<K> for crate::auth::Caller {
    fn from_request(call: &mut Call<K>, _: &Param) -> Result<Self, Error> {
        Ok(crate::auth::Caller(call.request.principal.clone()))
    }
}

/// The authenticated caller; a request without one (stdio, or a server without
/// [`Auth`](crate::auth::Auth)) fails with `-32603` naming the reason. Use
/// [`Caller`](crate::auth::Caller) where a caller is optional.
impl<K: Kind> FromRequest<K> for crate::auth::Principal {
    fn from_request(call: &mut Call<K>, _: &Param) -> Result<Self, Error> {
        match call.request.principal.as_deref() {
            Some(p) => Ok(p.clone()),
            None => Err(Error::protocol(crate::protocol::RpcError::internal(
                "this handler needs an authenticated caller, and the request has none (stdio, or a server without authorization)",
            ))),
        }
    }
}

/// The server's handle store, as the caller of this request owns it (see
/// [`Handles`](crate::store::Handles)).
impl<K: Kind> FromRequest<K> for crate::store::Handles {
    fn from_request(call: &mut Call<K>, _: &Param) -> Result<Self, Error> {
        let owner = call
            .request
            .principal
            .as_deref()
            .map(crate::auth::Principal::key);
        let server = call.request.server.upgrade().ok_or_else(|| {
            Error::protocol(RpcError::internal(
                "Internal error: the server is shutting down",
            ))
        })?;
        Ok(crate::store::Handles::new(
            server.handles.store(),
            server.handles.ttl,
            owner,
        ))
    }
}

impl<K: Kind> FromRequest<K> for Progress {
    fn from_request(call: &mut Call<K>, _: &Param) -> Result<Self, Error> {
        Ok(Progress(Arc::clone(&call.request)))
    }
}

impl<K: Kind> FromRequest<K> for Logger {
    fn describe(_: &Param, signature: &mut Signature) {
        signature.requirements().uses_logging();
    }
    fn from_request(call: &mut Call<K>, _: &Param) -> Result<Self, Error> {
        Ok(Logger(Arc::clone(&call.request)))
    }
}

impl<K: Kind, T: Send + Sync + 'static> FromRequest<K> for State<T> {
    fn describe(_: &Param, signature: &mut Signature) {
        signature.requirements().requires_state::<T>();
    }
    fn from_request(call: &mut Call<K>, _: &Param) -> Result<Self, Error> {
        call.request
            .extensions
            .get::<T>()
            .map(State)
            .ok_or_else(|| Error::protocol(RpcError::internal("server state missing")))
    }
}

impl<K: Kind> FromRequest<K> for Input {
    fn describe(_: &Param, signature: &mut Signature) {
        signature.requirements().uses_input();
    }
    fn from_request(call: &mut Call<K>, _: &Param) -> Result<Self, Error> {
        call.input()
    }
}

/// An argument of a handler of kind `K` (what `#[arg(...)]` describes): for a tool, a
/// `T: Deserialize + JsonSchema`; for a prompt, a `T: Deserialize`. Extractors are not
/// arguments, so `#[arg(...)]` on one is a compile error instead of being ignored.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is an extractor, not an argument, so `#[arg(...)]` does not apply to it",
    label = "an extractor: it reads the request, not the arguments",
    note = "`#[arg(...)]` names or describes an argument (a property of the tool's input schema, or a prompt argument); remove it here"
)]
pub trait Argument<K: Kind> {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema> Argument<kind::Tool> for T {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> Argument<kind::Prompt> for T {}

/// The arguments of a tool call, as sent, but for those the typed parameters declared
/// before it took: declared first, it holds them all, and the typed parameters after it
/// still get theirs. Useful with a hand-written `inputSchema`.
///
/// ```
/// use mcp_runtime::{Arguments, Server, tool, tools};
///
/// /// Looks an airport up by its code.
/// #[tool(input_schema = r#"{"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}, "required": ["code"]}"#)]
/// async fn airport(args: Arguments) -> String {
///     let code = args.0.get("code").and_then(|c| c.as_str()).unwrap_or_default();
///     format!("airport {code}")
/// }
///
/// let server = Server::builder("x", "1.0").tools(tools![airport]).build().unwrap();
/// assert_eq!(server.tool_names(), ["airport"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Arguments(pub Map<String, Value>);

impl FromRequest<kind::Tool> for Arguments {
    fn from_request(call: &mut Call<kind::Tool>, _: &Param) -> Result<Self, Error> {
        // A copy: a typed parameter after this one still finds its argument.
        Ok(Arguments(call.arguments.clone()))
    }
}

/// A type a parameter mirrored into an HTTP header (`#[arg(header = "...")]`) can have:
/// text, booleans and integers that stay within ±(2^53−1).
///
/// ```
/// use mcp_runtime::handler::HeaderValue;
/// use mcp_runtime::tool;
///
/// /// Queries orders in a regional shard; gateways route on `Mcp-Param-Region`.
/// #[tool]
/// async fn query_orders(#[arg(header = "Region")] region: String, #[arg(header = "Limit")] limit: Option<u32>) -> String {
///     format!("{region} {limit:?}")
/// }
///
/// fn mirrorable<T: HeaderValue>() {}
/// mirrorable::<Option<u32>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be mirrored into an `Mcp-Param-*` header",
    label = "not a string, boolean or small integer",
    note = "`x-mcp-header` applies to strings, booleans and integers of at most 32 bits (so values stay within ±(2^53−1)); not to floats, arrays or objects"
)]
pub trait HeaderValue {}
impl HeaderValue for String {}
impl HeaderValue for bool {}
impl HeaderValue for i8 {}
impl HeaderValue for i16 {}
impl HeaderValue for i32 {}
impl HeaderValue for u8 {}
impl HeaderValue for u16 {}
impl HeaderValue for u32 {}
impl<T: HeaderValue> HeaderValue for Option<T> {}

#[cfg(test)]
mod tests {
    use super::{Floats, floats};
    use serde_json::json;

    #[test]
    fn floats_are_classified_in_one_walk() {
        assert!(floats(&json!({"a": "3.0", "b": 3, "c": [1.5]})) == Floats::None);
        assert!(floats(&json!([1e19, {"x": -2e300}])) == Floats::Past);
        // One within ±2^53 decides, wherever it sits beside the ones past it.
        assert!(floats(&json!([1e19, {"x": 3.0}])) == Floats::Safe);
        assert!(floats(&json!({"x": [-9007199254740991.0], "y": 1e19})) == Floats::Safe);
        // 2^53 itself is also 2^53 + 1 written as a float.
        assert!(floats(&json!([9007199254740992.0, -9007199254740992.0])) == Floats::Past);
    }
}
