//! The types an `#[input(url = ...)]`, `#[input(sample = ...)]` or `#[input(roots)]`
//! parameter may have, as traits: a parameter of another type is reported at its type
//! with what to write, instead of as a mismatch inside the code `#[tool]` generates. Their
//! futures are boxed, as [`ElicitParam`](super::ElicitParam)'s are: a concrete type, so a
//! wrong parameter type is one error, not a second one where the future is awaited.

use super::{Elicited, Input};
use crate::Error;
use futures_util::future::BoxFuture;
use serde_json::Value;

/// The type of an `#[input(url = "...", message = "...")]` parameter: `Elicited<()>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot receive a URL elicitation",
    label = "write `Elicited<()>`",
    note = "the user completes a URL elicitation in the browser, so its answer carries no content: the parameter is `Elicited<()>`, which says whether they accepted, declined or cancelled"
)]
pub trait UrlParam: Sized + Send {
    /// Asks the user to complete the flow at `url`, under `key`.
    fn elicit_url<'a>(
        input: &'a Input,
        key: &'a str,
        message: String,
        url: String,
    ) -> BoxFuture<'a, Result<Self, Error>>;
}

impl UrlParam for Elicited<()> {
    fn elicit_url<'a>(
        input: &'a Input,
        key: &'a str,
        message: String,
        url: String,
    ) -> BoxFuture<'a, Result<Self, Error>> {
        Box::pin(input.elicit_url(key, message, url))
    }
}

/// The type of an `#[input(sample = "...")]` parameter: the client's
/// `sampling/createMessage` result as a `serde_json::Value`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot receive a sampling result",
    label = "write `serde_json::Value`",
    note = "an `#[input(sample = ...)]` parameter is the client's `CreateMessageResult` as a `serde_json::Value` (its `content`, `model`, `role`, `stopReason`)"
)]
pub trait SampleParam: Sized + Send {
    /// Asks the client for a completion of `params`, under `key`.
    fn sample<'a>(
        input: &'a Input,
        key: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Self, Error>>;
}

impl SampleParam for Value {
    fn sample<'a>(
        input: &'a Input,
        key: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Self, Error>> {
        Box::pin(input.sample(key, params))
    }
}

/// The type of an `#[input(roots)]` parameter: the client's roots, `Vec<serde_json::Value>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot receive the client's roots",
    label = "write `Vec<serde_json::Value>`",
    note = "an `#[input(roots)]` parameter is the client's list of roots, each a `serde_json::Value` with a `uri` and maybe a `name`"
)]
pub trait RootsParam: Sized + Send {
    /// Asks the client for its roots, under `key`.
    fn roots<'a>(input: &'a Input, key: &'a str) -> BoxFuture<'a, Result<Self, Error>>;
}

impl RootsParam for Vec<Value> {
    fn roots<'a>(input: &'a Input, key: &'a str) -> BoxFuture<'a, Result<Self, Error>> {
        Box::pin(input.roots(key))
    }
}
