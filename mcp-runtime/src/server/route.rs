//! Routing: one incoming message → its parts → the method family that serves it.

use super::Server;
use super::catalog::Catalog;
use super::methods::{self, listen::Listen};
use super::parts::{Message, Parts, Streams, TransportGuard, read_envelope};
use super::pipeline::Job;
use super::reply::{Rejection, Reply};
use crate::protocol::methods as m;
use serde_json::Value;

/// What the server made of one incoming message.
pub(crate) enum Prepared {
    /// The answer is known already (an error, or a precomputed result).
    Reply(Reply),
    /// A well-formed notification: never answered.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// A request to run.
    Call(Job),
    /// A `subscriptions/listen` stream to serve until the client leaves.
    Listen(Listen),
    /// The client answered a request of the server (legacy era): nothing to send back.
    Answer,
}

impl Server {
    /// Applies the request rules to one parsed message (see `parts`) and routes it.
    pub(crate) fn prepare(
        &self,
        msg: Value,
        guard: &dyn TransportGuard,
        streams: Streams,
    ) -> Prepared {
        // Refused before routing: counted under the method when it is one of MCP, as the
        // legacy route counts.
        #[cfg(feature = "metrics")]
        let label = super::metrics::label_of(&msg);
        let (id, method, params) = match read_envelope(msg) {
            Ok(Message::Request { id, method, params }) => (id, method, params),
            Ok(Message::Notification { method, params }) => {
                if let Err(e) = guard.check_notification(&method) {
                    return Prepared::Reply(Reply::rejection(None, Rejection::header(e)));
                }
                return Prepared::Notification { method, params };
            }
            Err((id, rejection)) => {
                let reply = Reply::rejection(id.as_ref(), rejection);
                #[cfg(feature = "metrics")]
                super::metrics::rejected(label, &reply);
                return Prepared::Reply(reply);
            }
        };
        match Parts::read(id, method, params, guard, streams, self.inner.versions()) {
            Ok((parts, params)) => {
                let _entered = parts.span.clone().entered();
                #[cfg(feature = "metrics")]
                let observed = super::metrics::begin(&parts.method, &params, &self.inner);
                let prepared = self.route(parts, params, guard);
                #[cfg(feature = "metrics")]
                let prepared = self.observed(observed, prepared);
                prepared
            }
            Err((id, rejection)) => {
                let reply = Reply::rejection(Some(&id), rejection);
                #[cfg(feature = "metrics")]
                super::metrics::rejected(label, &reply);
                Prepared::Reply(reply)
            }
        }
    }

    /// Records the request's metrics once its answer is ready.
    #[cfg(feature = "metrics")]
    pub(crate) fn observed(
        &self,
        observation: Option<super::metrics::Observation>,
        prepared: Prepared,
    ) -> Prepared {
        let Some(obs) = observation else {
            return prepared;
        };
        match prepared {
            Prepared::Reply(r) => {
                super::metrics::end(obs, &r);
                Prepared::Reply(r)
            }
            Prepared::Call(job) => {
                let watch = super::metrics::Watch::new(obs);
                Prepared::Call(job.observe(watch))
            }
            other => other,
        }
    }

    /// The methods of both eras on tools, prompts and resources (lists, calls, reads,
    /// completion), when the catalog advertises them; any other method goes to `others`
    /// (the era's own methods).
    pub(crate) fn route_items(
        &self,
        parts: Parts,
        params: serde_json::Map<String, Value>,
        guard: &dyn TransportGuard,
        catalog: &Catalog,
        others: impl FnOnce(Parts, serde_json::Map<String, Value>) -> Prepared,
    ) -> Prepared {
        let reply = |r: Reply| Prepared::Reply(r);
        match parts.method.as_str() {
            m::TOOLS_LIST if catalog.has_tools() => reply(methods::lists::page(
                &self.inner,
                &parts,
                &params,
                &catalog.tool_list,
            )),
            m::TOOLS_CALL if catalog.has_tools() => {
                methods::tools::call(self, parts, params, guard, catalog)
            }
            m::PROMPTS_LIST if catalog.has_prompts() => reply(methods::lists::page(
                &self.inner,
                &parts,
                &params,
                &catalog.prompt_list,
            )),
            m::PROMPTS_GET if let Some(e) = catalog.prompt_engine() => {
                (e.serve)(self, parts, params, guard, catalog)
            }
            m::RESOURCES_LIST | m::RESOURCES_READ if let Some(e) = catalog.resource_engine() => {
                (e.serve)(self, parts, params, guard, catalog)
            }
            m::RESOURCES_TEMPLATES_LIST if catalog.has_resources() => reply(methods::lists::page(
                &self.inner,
                &parts,
                &params,
                &catalog.template_list,
            )),
            m::COMPLETE if let Some(complete) = catalog.completion() => {
                complete(self, parts, params, catalog)
            }
            _ => others(parts, params),
        }
    }

    /// The method family serving `parts.method`; `-32601` for a method that does not
    /// exist or that this server does not advertise.
    fn route(
        &self,
        parts: Parts,
        params: serde_json::Map<String, Value>,
        guard: &dyn TransportGuard,
    ) -> Prepared {
        let catalog = self.inner.catalog();
        self.route_items(parts, params, guard, &catalog, |parts, params| {
            self.route_modern(parts, params, guard, &catalog)
        })
    }

    /// The methods only the 2026-07-28 era has.
    fn route_modern(
        &self,
        parts: Parts,
        params: serde_json::Map<String, Value>,
        guard: &dyn TransportGuard,
        catalog: &Catalog,
    ) -> Prepared {
        let reply = |r: Reply| Prepared::Reply(r);
        match parts.method.as_str() {
            m::DISCOVER => reply(methods::lists::discover(&parts, catalog)),
            m::LISTEN => methods::listen::open(self, parts, params, catalog),
            // Also once the tools running as tasks are gone: their tasks remain.
            m::TASKS_GET | m::TASKS_UPDATE | m::TASKS_CANCEL
                if let Some(e) = catalog
                    .task_engine
                    .or_else(|| self.inner.task_engine.get().copied()) =>
            {
                (e.method)(self, parts, params, guard)
            }
            _ => {
                tracing::debug!("method not found");
                reply(Reply::rejection(
                    Some(&parts.id),
                    Rejection::unknown_method(
                        &parts.method,
                        parts.session.is_some(),
                        self.inner.versions(),
                    ),
                ))
            }
        }
    }
}
