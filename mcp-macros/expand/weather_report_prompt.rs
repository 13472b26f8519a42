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
#[allow(dead_code)]
impl weather_report {
    #[doc(hidden)]
    pub fn __mcp_prompt() -> ::mcp_runtime::__private::PromptDef {
        {
            const __PARAMS: &[::mcp_runtime::__private::Param] = &[
                ::mcp_runtime::__private::Param {
                    name: "city",
                    description: ::mcp_runtime::__private::None,
                    header: ::mcp_runtime::__private::None,
                },
            ];
            let mut __signature = ::mcp_runtime::__private::PromptSignature::new();
            <String as ::mcp_runtime::__private::FromPromptCall>::describe(
                &__PARAMS[0usize],
                &mut __signature,
            );
            ::mcp_runtime::__private::PromptDef::new(
                    "weather_report",
                    __signature,
                    move |mut __call: ::mcp_runtime::__private::PromptCall| {
                        ::mcp_runtime::__private::boxed(async move {
                            let __mcp_fn = weather_report;
                            let city = <String as ::mcp_runtime::__private::FromPromptCall>::from_prompt_call(
                                &mut __call,
                                &__PARAMS[0usize],
                            )?;
                            ::mcp_runtime::__private::Result::<
                                _,
                                ::mcp_runtime::__private::ToolError,
                            >::Ok(__mcp_fn(city).await)
                        })
                    },
                )
                .description("Asks the model for a weather report.")
        }
    }
}
