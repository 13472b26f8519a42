// The expansion of `weather_report_prompt` (mcp-macros/src/expand/snapshots.rs). Generated: do not edit;
// MCP_UPDATE_SNAPSHOTS=1 cargo test -p mcp-macros rewrites it.

/// Asks the model for a weather report.
async fn weather_report(city: String) -> PromptMessage {
    PromptMessage::user(format!("Write a short weather report for {city}."))
}
#[doc(hidden)]
#[allow(non_camel_case_types, dead_code)]
struct weather_report {}
#[automatically_derived]
impl weather_report {
    #[doc(hidden)]
    #[allow(dead_code)]
    pub const __MCP_KEY: &'static str = "weather_report";
    #[doc(hidden)]
    pub fn __mcp_prompt() -> ::mcp_runtime::__private::PromptDef {
        use ::mcp_runtime::__private as __mcp;
        {
            const __PARAMS: &[__mcp::Param] = &[__mcp::Param::new("city")];
            let mut __signature = __mcp::Signature::new();
            <String as __mcp::FromRequest<
                __mcp::Prompt,
            >>::describe(&__PARAMS[0], &mut __signature);
            __mcp::PromptDef::new(
                    "weather_report",
                    __signature,
                    move |mut __call: __mcp::Call<__mcp::Prompt>| {
                        __mcp::boxed(async move {
                            let __mcp_fn = weather_report;
                            let city = <String as __mcp::FromRequest<
                                __mcp::Prompt,
                            >>::from_request(&mut __call, &__PARAMS[0])?;
                            __mcp::Result::<_, __mcp::Error>::Ok(__mcp_fn(city).await)
                        })
                    },
                )
                .description("Asks the model for a weather report.")
                .origin(::core::concat!(::core::module_path!(), "::", "weather_report"))
        }
    }
}
