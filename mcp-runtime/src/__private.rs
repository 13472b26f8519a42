//! What the macros expand to: the only contract between `mcp-macros` and this crate.

pub use crate::Error;
pub use crate::blocking;
pub use crate::mrtr::{
    ElicitForm, ElicitParam, FormField, Input, RootsParam, SampleParam, UrlParam, sampling_request,
};
pub use crate::protocol::{Annotations, CacheHints, CacheScope, Role};
pub use crate::server::apps::{Csp, Permission, UiResource};
pub use crate::server::def::kind::{Prompt, Resource, Tool};
pub use crate::server::def::{
    Call, FromRequest, Icon, Param, PromptDef, Provider, ResourceDef, Signature, TaskSupport,
    ToolAnnotations, ToolDef,
};
pub use core::default::Default;
pub use core::option::Option::{self, None, Some};
pub use core::result::Result::{self, Err, Ok};
pub use futures_util::join;
pub use schemars::JsonSchema;
pub use serde::de::DeserializeOwned;
pub use std::format;
pub use std::string::String;
pub use std::sync::Arc;
pub use std::vec::Vec;

use futures_util::future::BoxFuture;

/// Checks at compile time that a form field's type is allowed (reported at the type).
pub fn assert_form_field<T: FormField>() {}

/// Checks at compile time that a header-mirrored parameter has a type that can be
/// mirrored (the error is reported at the type).
pub fn assert_header_value<T: crate::handler::HeaderValue>() {}

/// Caching hints from `ttl_ms = .., cache_scope = ".."`; what is left out comes from
/// the default for lists.
pub fn cache_hints(ttl_ms: Option<u64>, private: Option<bool>) -> CacheHints {
    let d = crate::config::DEFAULT_LIST_CACHE;
    CacheHints::new(
        ttl_ms.unwrap_or(d.ttl_ms),
        match private {
            Some(true) => CacheScope::Private,
            Some(false) => CacheScope::Public,
            None => d.scope,
        },
    )
}

/// Boxes a handler's future, requiring it to be `Send` (the error is reported at the
/// handler's name).
pub fn boxed<F, T>(future: F) -> BoxFuture<'static, T>
where
    F: core::future::Future<Output = T> + Send + 'static,
{
    Box::pin(future)
}

/// The definitions of a `tools![..]`, `resources![..]` or `prompts![..]`: each
/// constructor of the list's constant table, called in order. A loop here rather than one
/// call per item in the caller, so the caller's code does not grow with the list.
pub fn defs<T>(constructors: &[fn() -> T]) -> Vec<T> {
    constructors.iter().map(|make| make()).collect()
}

/// The definitions of one kind of a `#[server]` impl: each item's constructor, given the
/// server value, called in order (as [`defs`]).
pub fn defs_with<S, T>(this: &Arc<S>, constructors: &[fn(&Arc<S>) -> T]) -> Vec<T> {
    constructors.iter().map(|make| make(this)).collect()
}

/// Coerces a handler that captures nothing (the closure of a free function or of an
/// associated function without `self`) to a function pointer, so that the definition's
/// constructor and its type-erased wrapper are compiled once per kind and output type
/// rather than once per item.
pub fn handler<K: crate::kind::Kind, R>(
    f: fn(Call<K>) -> BoxFuture<'static, Result<R, Error>>,
) -> fn(Call<K>) -> BoxFuture<'static, Result<R, Error>> {
    f
}

/// What a `&self` method's handler is given: the server value and the call.
pub type MethodHandler<S, K, R> = fn(Arc<S>, Call<K>) -> BoxFuture<'static, Result<R, Error>>;

/// What a `&self` method's [`direct_with`] handler is given: the server value and the
/// call, to read the parameters from before the method's future is made.
pub type MethodDirect<S, K, R> = fn(&Arc<S>, Call<K>) -> Result<BoxFuture<'static, R>, Error>;

/// [`handler`] for a `&self` method of a `#[server]` impl: the handler gets the server
/// value, so it captures nothing and is one function pointer; the closure holding the
/// value is compiled once per server type, kind and output type.
pub fn handler_with<S: Send + Sync + 'static, K: crate::kind::Kind, R: 'static>(
    this: Arc<S>,
    f: MethodHandler<S, K, R>,
) -> impl Fn(Call<K>) -> BoxFuture<'static, Result<R, Error>> + Send + Sync + 'static {
    move |call: Call<K>| f(Arc::clone(&this), call)
}

/// [`direct`] for a `&self` method of a `#[server]` impl (see [`handler_with`]).
pub fn direct_with<S: Send + Sync + 'static, K: crate::kind::Kind, R: Send + 'static>(
    this: Arc<S>,
    f: MethodDirect<S, K, R>,
) -> impl Fn(Call<K>) -> Direct<R> + Send + Sync + 'static {
    move |call: Call<K>| Direct(Some(f(&this, call)))
}

/// The handler of an `async fn` that asks for no input and captures nothing: the call's
/// parameters are read before the function's future is made, so the only future per item
/// is the function's own; the wrapper around it is compiled once per kind and output type.
/// An error reading a parameter is the call's error, as before.
pub fn direct<K: crate::kind::Kind, R: Send + 'static>(
    f: fn(Call<K>) -> Result<BoxFuture<'static, R>, Error>,
) -> impl Fn(Call<K>) -> Direct<R> + Send + Sync + 'static {
    move |call: Call<K>| Direct(Some(f(call)))
}

/// The future of a [`direct`] handler: the function's future, or the error reading its
/// parameters.
pub struct Direct<R>(Option<Result<BoxFuture<'static, R>, Error>>);

impl<R> core::future::Future for Direct<R> {
    type Output = Result<R, Error>;

    fn poll(
        self: core::pin::Pin<&mut Self>,
        cx: &mut core::task::Context<'_>,
    ) -> core::task::Poll<Self::Output> {
        let this = self.get_mut();
        match this.0.take() {
            Some(Ok(mut fut)) => match fut.as_mut().poll(cx) {
                core::task::Poll::Ready(out) => core::task::Poll::Ready(Ok(out)),
                core::task::Poll::Pending => {
                    this.0 = Some(Ok(fut));
                    core::task::Poll::Pending
                }
            },
            Some(Err(e)) => core::task::Poll::Ready(Err(e)),
            // Polled after it was ready.
            None => core::task::Poll::Pending,
        }
    }
}

/// An argument inserted into a URL elicitation's URL: every byte but the unreserved ones
/// (RFC 3986) percent-encoded, so a value cannot add a path segment, a query or a
/// fragment of its own.
pub fn url_component(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Parses JSON text the macro already validated at compile time.
pub fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or(serde_json::Value::Null)
}

/// The argument's type made from a string literal `#[arg(default = "..")]`, with `Into`.
#[diagnostic::on_unimplemented(
    message = "a string `default` is made into the argument's type with `From<&str>`, which `{Self}` does not implement",
    label = "a string literal, for an argument of type `{Self}`",
    note = "write the value itself (`default = 5`, not `default = \"5\"`), or an expression of type `{Self}`"
)]
pub trait StrDefault {
    /// The value `text` stands for.
    fn from_literal(text: &'static str) -> Self;
}

#[diagnostic::do_not_recommend]
impl<T> StrDefault for T
where
    &'static str: Into<T>,
{
    fn from_literal(text: &'static str) -> T {
        text.into()
    }
}

/// What `#[arg(default = "..")]` evaluates to.
pub fn str_default<T: StrDefault>(text: &'static str) -> T {
    T::from_literal(text)
}

/// A handler parameter carrying `#[arg(...)]` is an argument of its kind: checked at
/// compile time, at the parameter's type.
pub fn assert_argument<T: crate::handler::Argument<K>, K: crate::kind::Kind>() {}

/// What a companion's key of another kind is (and a `#[server]` type's keys): evaluated
/// only when a list reads it, where it fails compilation with `why`, saying where the
/// item goes. One call per key, so the item's code stays small.
#[track_caller]
pub const fn wrong_list(why: &'static str) -> &'static str {
    panic!("{}", why)
}

/// What a companion's constructor of another kind does: never called (its list failed to
/// compile), and not compiled unless it is.
pub fn unlisted<T>() -> T {
    unreachable!("an item listed in another kind's list")
}

/// Fails compilation (const evaluation) when two of `names` are equal: the names of the
/// items of one `tools![..]`, `prompts![..]` or `resources![..]`. `N` is `names.len()`.
pub const fn assert_distinct<const N: usize>(kind: &str, names: &[&str]) {
    // (hash, index) pairs, sorted by hash, then equal neighbours compared for real: the
    // check stays O(n log n) for lists of a thousand items.
    let mut keyed = [(0u64, 0usize); N];
    let mut i = 0;
    while i < N {
        keyed[i] = (fnv1a(names[i].as_bytes()), i);
        i += 1;
    }
    heapsort(&mut keyed);
    let mut i = 1;
    while i < N {
        let (a, b) = (names[keyed[i - 1].1], names[keyed[i].1]);
        if keyed[i - 1].0 == keyed[i].0 && bytes_eq(a.as_bytes(), b.as_bytes()) {
            duplicate(kind, a);
        }
        i += 1;
    }
}

const fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    h
}

const fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn heapsort(v: &mut [(u64, usize)]) {
    let n = v.len();
    let mut start = n / 2;
    while start > 0 {
        start -= 1;
        sift_down(v, start, n);
    }
    let mut end = n;
    while end > 1 {
        end -= 1;
        v.swap(0, end);
        sift_down(v, 0, end);
    }
}

const fn sift_down(v: &mut [(u64, usize)], mut root: usize, end: usize) {
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && v[child].0 < v[child + 1].0 {
            child += 1;
        }
        if v[root].0 >= v[child].0 {
            return;
        }
        v.swap(root, child);
        root = child;
    }
}

/// Stops const evaluation with "two tools are named `x`" (for resources, which a list
/// tells apart by URI, "two resources have the URI `x`").
const fn duplicate(kind: &str, name: &str) -> ! {
    let mut buf = [0u8; 512];
    let mut n = 0;
    let by_uri = bytes_eq(kind.as_bytes(), b"resources");
    let parts: [&[u8]; 5] = match by_uri {
        true => [
            b"two ",
            kind.as_bytes(),
            b" have the URI `",
            name.as_bytes(),
            b"`; each resource of a list needs a URI (or URI template) of its own",
        ],
        false => [
            b"two ",
            kind.as_bytes(),
            b" are named `",
            name.as_bytes(),
            b"`; give one of them its own `name = \"...\"`",
        ],
    };
    let mut p = 0;
    while p < parts.len() {
        let mut i = 0;
        while i < parts[p].len() && n < buf.len() {
            buf[n] = parts[p][i];
            n += 1;
            i += 1;
        }
        p += 1;
    }
    let (text, _) = buf.split_at(n);
    match core::str::from_utf8(text) {
        Ok(message) => panic!("{}", message),
        Err(_) => panic!("two items of one list have the same name"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_names_pass() {
        const NAMES: &[&str] = &["b", "a", "c", "ab", "ba"];
        assert_distinct::<{ NAMES.len() }>("tools", NAMES);
        assert_distinct::<0>("tools", &[]);
    }

    #[test]
    #[should_panic(expected = "two tools are named `a`")]
    fn a_duplicate_is_named() {
        assert_distinct::<4>("tools", &["x", "a", "y", "a"]);
    }

    #[test]
    #[should_panic(expected = "two resources have the URI `x://a`")]
    fn a_duplicate_resource_is_named_by_its_uri() {
        assert_distinct::<2>("resources", &["x://a", "x://a"]);
    }
}
