// The expansion of `pick_repo_tool` (mcp-macros/src/expand/snapshots.rs). Generated: do not edit;
// MCP_UPDATE_SNAPSHOTS=1 cargo test -p mcp-macros rewrites it.

/// Finds the user's repositories and lets them pick one.
async fn pick_repo(team: String, input: Input) -> Result<String, Error> {
    let members = input.step("members", async { vec!["ada".to_string()] }).await?;
    let who: Login = input
        .elicit("login", format!("Which of {members:?} are you?"))
        .await?
        .accepted()?;
    let pick: Pick = input
        .elicit("repo", format!("Which repository of {}?", who.login))
        .await?
        .accepted()?;
    Ok(format!("{} in {team}", pick.repo))
}
#[doc(hidden)]
#[allow(non_camel_case_types, dead_code)]
struct pick_repo {}
#[automatically_derived]
impl pick_repo {
    #[doc(hidden)]
    #[allow(dead_code)]
    pub const __MCP_KEY: &'static str = "pick_repo";
    #[doc(hidden)]
    pub fn __mcp_tool() -> ::mcp_runtime::__private::ToolDef {
        use ::mcp_runtime::__private as __mcp;
        {
            const __PARAMS: &[__mcp::Param] = &[
                __mcp::Param::new("team"),
                __mcp::Param::new("input"),
            ];
            let mut __signature = __mcp::Signature::new();
            <String as __mcp::FromRequest<
                __mcp::Tool,
            >>::describe(&__PARAMS[0], &mut __signature);
            <Input as __mcp::FromRequest<
                __mcp::Tool,
            >>::describe(&__PARAMS[1], &mut __signature);
            __mcp::ToolDef::new(
                    "pick_repo",
                    __signature,
                    move |mut __call: __mcp::Call<__mcp::Tool>| {
                        __mcp::boxed(async move {
                            let __mcp_fn = pick_repo;
                            let team = <String as __mcp::FromRequest<
                                __mcp::Tool,
                            >>::from_request(&mut __call, &__PARAMS[0])?;
                            let input = <Input as __mcp::FromRequest<
                                __mcp::Tool,
                            >>::from_request(&mut __call, &__PARAMS[1])?;
                            __mcp::Result::<
                                _,
                                __mcp::Error,
                            >::Ok(__mcp_fn(team, input).await)
                        })
                    },
                )
                .description("Finds the user's repositories and lets them pick one.")
                .origin(::core::concat!(::core::module_path!(), "::", "pick_repo"))
        }
    }
}
