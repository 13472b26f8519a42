// The expansion of `weather_form` (mcp-macros/src/expand/snapshots.rs). Generated: do not edit;
// MCP_UPDATE_SNAPSHOTS=1 cargo test -p mcp-macros rewrites it.

const _: () = {
    #[automatically_derived]
    impl ::mcp_runtime::__private::ElicitForm for GitHub {}
    #[allow(dead_code)]
    fn __mcp_form_fields() {
        ::mcp_runtime::__private::assert_form_field::<String>();
    }
};
