//! Multi round-trip requests (MRTR): a handler asks the client for input (elicitation,
//! sampling, roots); the round ends with `resultType: "input_required"` and the client
//! answers on a retry.
//!
//! The handler is plain straight-line code. Each [`Input`] method returns what the client
//! answered (this round or an earlier one); when the answer is not there yet, it records
//! the question and the handler goes no further this round. Work done between questions
//! goes through [`Input::step`]: its result is recorded in the sealed `requestState`, so a
//! later round replays it instead of running it again. Nothing is kept in server memory
//! between rounds: any instance holding the key ring can serve the next round.
//!
//! This module owns the whole mechanism: the handler-facing [`Input`], the forms it asks
//! for, opening a round from `inputResponses` and `requestState` (`round`), and sealing
//! the next one ([`KeyRing`]). It knows nothing of the server that runs it.

mod forms;
mod input;
mod params;
pub(crate) mod round;
pub(crate) mod state;

pub use forms::{ElicitForm, ElicitParam, FormField, sampling_request};
pub use input::{Elicited, Input};
pub use params::{RootsParam, SampleParam, UrlParam};
pub use state::{DEFAULT_STATE_TTL, KEYS_ENV, KeyRing, MAX_STATE_LEN};
