// The expansion of `weather_form` (mcp-macros/src/expand/snapshots.rs). Generated: do not edit;
// MCP_UPDATE_SNAPSHOTS=1 cargo test -p mcp-macros rewrites it.

const _: () = {
    use ::mcp_runtime::__private as __mcp;
    #[automatically_derived]
    impl __mcp::ElicitForm for GitHub {}
    #[allow(dead_code)]
    fn __mcp_form_fields() {
        __mcp::assert_form_field::<String>();
    }
};
