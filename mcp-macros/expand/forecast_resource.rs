// The expansion of `forecast_resource` (mcp-macros/src/expand/snapshots.rs). Generated: do not edit;
// MCP_UPDATE_SNAPSHOTS=1 cargo test -p mcp-macros rewrites it.

/// Three-day forecast for a city.
async fn forecast(city: String) -> String {
    format!("{city}: sun, clouds, rain")
}
#[doc(hidden)]
#[allow(non_camel_case_types, dead_code)]
struct forecast {}
#[automatically_derived]
impl forecast {
    #[doc(hidden)]
    #[allow(dead_code)]
    pub const __MCP_KEY: &'static str = "weather://{city}/forecast";
    #[doc(hidden)]
    pub fn __mcp_resource() -> ::mcp_runtime::__private::ResourceDef {
        use ::mcp_runtime::__private as __mcp;
        {
            let __signature = __mcp::Signature::new();
            __mcp::ResourceDef::new(
                    "weather://{city}/forecast",
                    "forecast",
                    __signature,
                    move |mut __call: __mcp::Call<__mcp::Resource>| {
                        __mcp::boxed(async move {
                            let __mcp_fn = forecast;
                            let city = __call.variable::<String>("city")?;
                            __mcp::Result::<_, __mcp::Error>::Ok(__mcp_fn(city).await)
                        })
                    },
                )
                .description("Three-day forecast for a city.")
                .mime_type("text/plain")
                .origin(::core::concat!(::core::module_path!(), "::", "forecast"))
        }
    }
}
