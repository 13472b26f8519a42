//! Completion (`completion/complete`): suggestions for one prompt argument or template
//! variable, given the partial value and the arguments already known.

use super::call::Call;
use super::extract::FromRequest;
use super::kind::Completion;
use super::signature::{Param, Signature};
use futures_util::FutureExt;
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

/// A completer, type-erased: the partial value and the call (with the known arguments).
/// Completers of [`IntoCompleter`] cannot fail; a forwarded completion can.
pub(crate) type Completer = Arc<
    dyn Fn(String, Call<Completion>) -> BoxFuture<'static, Result<Suggestions, crate::Error>>
        + Send
        + Sync,
>;

/// What a completer found. (Public only in name: the hidden `into_completer` returns it.)
#[doc(hidden)]
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Suggestions {
    pub(crate) values: Vec<String>,
    /// How many values there are in all, when the completer knows of more than it gave
    /// (a forwarded completion); otherwise the values given are all there are.
    pub(crate) total: Option<usize>,
    /// Whether there are more than were given, when the completer says so.
    pub(crate) has_more: bool,
}

impl From<Vec<String>> for Suggestions {
    fn from(values: Vec<String>) -> Self {
        Suggestions {
            values,
            total: None,
            has_more: false,
        }
    }
}

/// An async function that completes one argument: it takes the partial value, then any of
/// [`KnownArguments`] (the other values the client already has), [`Context`](crate::Context)
/// and [`State<T>`](crate::State) (extractors, through [`FromRequest<Completion>`]), and
/// returns the suggestions. In a `#[server]` impl, `complete = method` names a `&self`
/// method of the same shape, so a completer sees the server's own state.
///
/// ```
/// use mcp_runtime::{Error, KnownArguments, Server, State, resource, resources};
///
/// struct Notes(Vec<u64>);
///
/// async fn note_ids(partial: String, notes: State<Notes>, _known: KnownArguments) -> Vec<String> {
///     notes.0.iter().map(u64::to_string).filter(|i| i.starts_with(&partial)).collect()
/// }
///
/// /// One note, by id.
/// #[resource("notes://{id}")]
/// async fn note(#[arg(complete = note_ids)] id: u64) -> Result<String, Error> {
///     Ok(format!("note {id}"))
/// }
///
/// let server = Server::builder("notes", "1.0").state(Notes(vec![1, 2, 10])).resources(resources![note]).build().unwrap();
/// # drop(server);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot complete an argument",
    note = "a completer is an `async fn(partial: String, ..) -> Vec<String>` whose other parameters are `KnownArguments`, `Context` or `State<T>` (at most three)"
)]
pub trait IntoCompleter<Args>: Send + Sync + 'static {
    #[doc(hidden)]
    fn into_completer(self) -> Completer;
    /// What the completer's extractors need from the server.
    #[doc(hidden)]
    fn describe(signature: &mut Signature) {
        let _ = signature;
    }
}

impl<F, Fut> IntoCompleter<(String,)> for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Vec<String>> + Send + 'static,
{
    fn into_completer(self) -> Completer {
        Arc::new(move |partial, _| Box::pin(self(partial).map(|v| Ok(v.into()))))
    }
}

/// Completers with extractors, by arity.
macro_rules! completers {
    ($($arg:ident),+) => {
        impl<F, Fut, $($arg),+> IntoCompleter<(String, $($arg,)+)> for F
        where
            F: Fn(String, $($arg),+) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = Vec<String>> + Send + 'static,
            $($arg: FromRequest<Completion> + 'static),+
        {
            fn into_completer(self) -> Completer {
                let f = Arc::new(self);
                Arc::new(move |partial, mut call: Call<Completion>| {
                    #[allow(non_snake_case)]
                    let ($($arg,)+) = ($(match $arg::from_request(&mut call, &Param::new("")) {
                        Ok(v) => v,
                        Err(e) => {
                            tracing::warn!("a completer's parameter is unavailable: {e}");
                            return Box::pin(async { Ok(Suggestions::default()) });
                        }
                    },)+);
                    Box::pin(f(partial, $($arg),+).map(|v| Ok(v.into())))
                })
            }
            fn describe(signature: &mut Signature) {
                $($arg::describe(&Param::new(""), signature);)+
            }
        }
    };
}

completers!(A);
completers!(A, B);
completers!(A, B, C);

impl FromRequest<Completion> for KnownArguments {
    fn from_request(call: &mut Call<Completion>, _: &Param) -> Result<Self, crate::Error> {
        Ok(KnownArguments(
            call.arguments
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect(),
        ))
    }
}
