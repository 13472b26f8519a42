//! Completion (`completion/complete`): suggestions for one prompt argument or template
//! variable, given the partial value and the arguments already known.

use futures_util::future::BoxFuture;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

/// At most this many values go in one completion result.
pub const MAX_COMPLETIONS: usize = 100;

/// The arguments (or template variables) the client already filled in
/// (`context.arguments`).
///
/// ```
/// use mcp_runtime::{KnownArguments, PromptMessage, Server, prompt, prompts};
///
/// /// Suggests files in the folder of the language chosen already.
/// async fn files(partial: String, known: KnownArguments) -> Vec<String> {
///     vec![format!("{}/{partial}", known.get("language").unwrap_or("any"))]
/// }
///
/// /// Reviews a file.
/// #[prompt]
/// async fn review(language: String, #[arg(complete = files)] file: String) -> PromptMessage {
///     PromptMessage::user(format!("Review {file} ({language})"))
/// }
///
/// let server = Server::builder("x", "1.0").prompts(prompts![review]).build().unwrap();
/// # drop(server);
/// let known = KnownArguments([("language".to_owned(), "rust".to_owned())].into());
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// assert_eq!(files("ma".into(), known).await, ["rust/ma"]);
/// # });
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownArguments(pub BTreeMap<String, String>);

impl KnownArguments {
    /// The value of another argument, if the client sent it.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

pub(crate) type Completer =
    Arc<dyn Fn(String, KnownArguments) -> BoxFuture<'static, Vec<String>> + Send + Sync>;

/// An async function that completes one argument: `async fn(partial: String) -> Vec<String>`
/// or `async fn(partial: String, known: KnownArguments) -> Vec<String>`.
///
/// ```
/// use mcp_runtime::{Error, Server, resource, resources};
///
/// async fn note_ids(partial: String) -> Vec<String> {
///     ["1", "2", "10"].into_iter().filter(|i| i.starts_with(&partial)).map(String::from).collect()
/// }
///
/// /// One note, by id.
/// #[resource("notes://{id}")]
/// async fn note(#[arg(complete = note_ids)] id: u64) -> Result<String, Error> {
///     Ok(format!("note {id}"))
/// }
///
/// let server = Server::builder("notes", "1.0").resources(resources![note]).build().unwrap();
/// # drop(server);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot complete an argument",
    note = "a completer is `async fn(partial: String) -> Vec<String>` or `async fn(partial: String, known: KnownArguments) -> Vec<String>`"
)]
pub trait IntoCompleter<Args>: Send + Sync + 'static {
    #[doc(hidden)]
    fn into_completer(self) -> Completer;
}

impl<F, Fut> IntoCompleter<(String,)> for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Vec<String>> + Send + 'static,
{
    fn into_completer(self) -> Completer {
        Arc::new(move |partial, _| Box::pin(self(partial)))
    }
}

impl<F, Fut> IntoCompleter<(String, KnownArguments)> for F
where
    F: Fn(String, KnownArguments) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Vec<String>> + Send + 'static,
{
    fn into_completer(self) -> Completer {
        Arc::new(move |partial, known| Box::pin(self(partial, known)))
    }
}
