// The expansion of `weather_tool` (mcp-macros/src/expand/snapshots.rs). Generated: do not edit;
// MCP_UPDATE_SNAPSHOTS=1 cargo test -p mcp-macros rewrites it.

/// Current weather for a location, personalised for the GitHub user.
async fn get_weather(location: String, user: GitHub) -> String {
    format!("Sunny in {location}, @{}", user.login)
}
#[doc(hidden)]
#[allow(non_camel_case_types, dead_code)]
struct get_weather {}
#[automatically_derived]
#[allow(dead_code)]
impl get_weather {
    #[doc(hidden)]
    pub fn __mcp_tool() -> ::mcp_runtime::__private::ToolDef {
        {
            const __PARAMS: &[::mcp_runtime::__private::Param] = &[
                ::mcp_runtime::__private::Param {
                    name: "location",
                    description: ::mcp_runtime::__private::None,
                    header: ::mcp_runtime::__private::None,
                },
                ::mcp_runtime::__private::Param {
                    name: "user",
                    description: ::mcp_runtime::__private::None,
                    header: ::mcp_runtime::__private::None,
                },
            ];
            let mut __signature = ::mcp_runtime::__private::Signature::new();
            __signature.requirements().uses_input();
            <String as ::mcp_runtime::__private::FromToolCall>::describe(
                &__PARAMS[0usize],
                &mut __signature,
            );
            ::mcp_runtime::__private::ToolDef::new(
                    "get_weather",
                    __signature,
                    move |mut __call: ::mcp_runtime::__private::ToolCall| {
                        ::mcp_runtime::__private::boxed(async move {
                            let __mcp_fn = get_weather;
                            let location = <String as ::mcp_runtime::__private::FromToolCall>::from_tool_call(
                                &mut __call,
                                &__PARAMS[0usize],
                            )?;
                            let __input = __call.input()?;
                            let user: GitHub = <GitHub as ::mcp_runtime::__private::ElicitParam>::elicit(
                                    &__input,
                                    "user",
                                    ::std::format!("Who is asking about {location}?"),
                                )
                                .await?;
                            ::mcp_runtime::__private::Result::<
                                _,
                                ::mcp_runtime::__private::ToolError,
                            >::Ok(__mcp_fn(location, user).await)
                        })
                    },
                )
                .description(
                    "Current weather for a location, personalised for the GitHub user.",
                )
        }
    }
}
