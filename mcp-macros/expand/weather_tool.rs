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
impl get_weather {
    #[doc(hidden)]
    #[allow(dead_code)]
    pub const __MCP_KEY: &'static str = "get_weather";
    #[doc(hidden)]
    pub fn __mcp_tool() -> ::mcp_runtime::__private::ToolDef {
        use ::mcp_runtime::__private as __mcp;
        {
            const __PARAMS: &[__mcp::Param] = &[__mcp::Param::new("location")];
            let mut __signature = __mcp::Signature::new();
            __signature.requirements().uses_input();
            <String as __mcp::FromRequest<
                __mcp::Tool,
            >>::describe(&__PARAMS[0], &mut __signature);
            __mcp::ToolDef::new(
                    "get_weather",
                    __signature,
                    move |mut __call: __mcp::Call<__mcp::Tool>| {
                        __mcp::boxed(async move {
                            let __mcp_fn = get_weather;
                            let location = <String as __mcp::FromRequest<
                                __mcp::Tool,
                            >>::from_request(&mut __call, &__PARAMS[0])?;
                            let __input = __call.input()?;
                            let user: GitHub = <GitHub as __mcp::ElicitParam>::elicit(
                                    &__input,
                                    "user",
                                    __mcp::format!("Who is asking about {location}?"),
                                )
                                .await?;
                            __mcp::Result::<
                                _,
                                __mcp::Error,
                            >::Ok(__mcp_fn(location, user).await)
                        })
                    },
                )
                .description(
                    "Current weather for a location, personalised for the GitHub user.",
                )
                .origin(::core::concat!(::core::module_path!(), "::", "get_weather"))
        }
    }
}
