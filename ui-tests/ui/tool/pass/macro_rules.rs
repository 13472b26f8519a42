//! Items a `macro_rules!` macro generates from its caller's tokens: the names, types,
//! return types, defaults and completers come from outside the macro, where its hygiene
//! would hide the bindings the expansion makes (`__mcp_fn`, `__this`, `__signature`,
//! `__call`, `__input`, `this`).

use mcp_runtime::{
    Form, PromptMessage, Server, prompt, prompts, resource, resources, server, tool, tools,
};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Sure {
    ok: bool,
}

macro_rules! async_tool {
    ($name:ident, $t:ident, $r:ident, $d:literal) => {
        /// Generated.
        #[tool]
        async fn $name(#[arg(default = $d)] x: $t) -> $r {
            x.to_string()
        }
    };
}
async_tool!(generated, u32, String, 4);

macro_rules! sync_tool {
    ($name:ident, $t:ident) => {
        /// Generated, on the blocking pool.
        #[tool]
        fn $name(x: $t) -> String {
            x.to_string()
        }
    };
}
sync_tool!(generated_sync, u32);

macro_rules! asking_tool {
    ($name:ident, $t:ident) => {
        /// Generated, asking first.
        #[tool]
        #[mcp_runtime::needs_input]
        async fn $name(#[input(elicit = "Sure?")] sure: $t) -> String {
            sure.ok.to_string()
        }
    };
}
asking_tool!(generated_asking, Sure);

macro_rules! template {
    ($name:ident, $t:ident) => {
        /// Generated.
        #[resource("gen://{id}")]
        async fn $name(id: $t) -> String {
            id.to_string()
        }
    };
}
template!(generated_resource, u32);

macro_rules! prompt_with_default {
    ($name:ident, $t:ident, $d:literal) => {
        /// Generated.
        #[prompt]
        async fn $name(#[arg(default = $d)] x: $t) -> PromptMessage {
            PromptMessage::user(x)
        }
    };
}
prompt_with_default!(generated_prompt, String, "hi");

struct S;

macro_rules! methods {
    ($name:ident, $t:ident, $complete:ident) => {
        #[server]
        impl S {
            /// Generated method.
            #[tool]
            async fn $name(&self, x: $t) -> String {
                x.to_string()
            }

            /// Generated template, completed by a method.
            #[resource("gen://{id}/method")]
            async fn generated_method_resource(
                &self,
                #[arg(complete = $complete)] id: $t,
            ) -> String {
                id.to_string()
            }

            async fn $complete(&self, partial: String) -> Vec<String> {
                vec![partial]
            }
        }
    };
}
methods!(generated_method, u32, known);

fn main() {
    let _ = Server::builder("t", "1")
        .tools(tools![generated, generated_sync, generated_asking])
        .resources(resources![generated_resource])
        .prompts(prompts![generated_prompt])
        .provider(S)
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .build()
        .unwrap();
}
