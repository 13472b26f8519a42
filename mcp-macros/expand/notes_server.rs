// The expansion of `notes_server` (mcp-macros/src/expand/snapshots.rs). Generated: do not edit;
// MCP_UPDATE_SNAPSHOTS=1 cargo test -p mcp-macros rewrites it.

impl Notes {
    /// Returns one note.
    async fn get_note(&self, id: u64) -> Result<Json<Note>, ToolError> {
        self.find(id)
    }
}
const _: () = {
    #[automatically_derived]
    impl ::mcp_runtime::__private::Provider for Notes {
        fn tools(
            this: &::mcp_runtime::__private::Arc<Self>,
        ) -> ::mcp_runtime::__private::Vec<::mcp_runtime::__private::ToolDef> {
            let _ = this;
            ::std::vec::Vec::from([
                {
                    const __PARAMS: &[::mcp_runtime::__private::Param] = &[
                        ::mcp_runtime::__private::Param {
                            name: "id",
                            description: ::mcp_runtime::__private::None,
                            header: ::mcp_runtime::__private::None,
                        },
                    ];
                    let mut __signature = ::mcp_runtime::__private::Signature::new();
                    <u64 as ::mcp_runtime::__private::FromToolCall>::describe(
                        &__PARAMS[0usize],
                        &mut __signature,
                    );
                    let __this = ::mcp_runtime::__private::Arc::clone(this);
                    ::mcp_runtime::__private::ToolDef::new(
                            "get_note",
                            __signature,
                            move |mut __call: ::mcp_runtime::__private::ToolCall| {
                                let __this = ::mcp_runtime::__private::Arc::clone(&__this);
                                ::mcp_runtime::__private::boxed(async move {
                                    let id = <u64 as ::mcp_runtime::__private::FromToolCall>::from_tool_call(
                                        &mut __call,
                                        &__PARAMS[0usize],
                                    )?;
                                    ::mcp_runtime::__private::Result::<
                                        _,
                                        ::mcp_runtime::__private::ToolError,
                                    >::Ok(__this.get_note(id).await)
                                })
                            },
                        )
                        .description("Returns one note.")
                        .annotations(::mcp_runtime::__private::ToolAnnotations {
                            title: ::mcp_runtime::__private::None,
                            read_only_hint: ::mcp_runtime::__private::Some(true),
                            destructive_hint: ::mcp_runtime::__private::None,
                            idempotent_hint: ::mcp_runtime::__private::None,
                            open_world_hint: ::mcp_runtime::__private::None,
                        })
                },
            ])
        }
    }
};
