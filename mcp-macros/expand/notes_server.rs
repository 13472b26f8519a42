// The expansion of `notes_server` (mcp-macros/src/expand/snapshots.rs). Generated: do not edit;
// MCP_UPDATE_SNAPSHOTS=1 cargo test -p mcp-macros rewrites it.

impl Notes {
    /// Returns one note.
    async fn get_note(&self, id: u64) -> Result<Json<Note>, Error> {
        self.find(id)
    }
}
const _: () = {
    use ::mcp_runtime::__private as __mcp;
    #[automatically_derived]
    impl __mcp::Provider for Notes {
        fn tools(this: &__mcp::Arc<Self>) -> __mcp::Vec<__mcp::ToolDef> {
            let _ = this;
            __mcp::Vec::from([
                {
                    const __PARAMS: &[__mcp::Param] = &[__mcp::Param::new("id")];
                    let mut __signature = __mcp::Signature::new();
                    <u64 as __mcp::FromRequest<
                        __mcp::Tool,
                    >>::describe(&__PARAMS[0], &mut __signature);
                    let __this = __mcp::Arc::clone(this);
                    __mcp::ToolDef::new(
                            "get_note",
                            __signature,
                            move |mut __call: __mcp::Call<__mcp::Tool>| {
                                let __this = __mcp::Arc::clone(&__this);
                                __mcp::boxed(async move {
                                    let id = <u64 as __mcp::FromRequest<
                                        __mcp::Tool,
                                    >>::from_request(&mut __call, &__PARAMS[0])?;
                                    __mcp::Result::<
                                        _,
                                        __mcp::Error,
                                    >::Ok(__this.get_note(id).await)
                                })
                            },
                        )
                        .description("Returns one note.")
                        .annotations(__mcp::ToolAnnotations::new().read_only_hint(true))
                        .origin(
                            ::core::concat!(
                                ::core::module_path!(), "::", "Notes::get_note"
                            ),
                        )
                },
            ])
        }
    }
};
