// The expansion of `pick_repo_tool` (mcp-macros/src/expand/snapshots.rs). Generated: do not edit;
// MCP_UPDATE_SNAPSHOTS=1 cargo test -p mcp-macros rewrites it.

/// Finds the user's repositories and lets them pick one.
async fn pick_repo(team: String, input: Input) -> Result<String, ToolError> {
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
#[allow(dead_code)]
impl pick_repo {
    #[doc(hidden)]
    pub fn __mcp_tool() -> ::mcp_runtime::__private::ToolDef {
        {
            const __PARAMS: &[::mcp_runtime::__private::Param] = &[
                ::mcp_runtime::__private::Param {
                    name: "team",
                    description: ::mcp_runtime::__private::None,
                    header: ::mcp_runtime::__private::None,
                },
                ::mcp_runtime::__private::Param {
                    name: "input",
                    description: ::mcp_runtime::__private::None,
                    header: ::mcp_runtime::__private::None,
                },
            ];
            let mut __signature = ::mcp_runtime::__private::Signature::new();
            <String as ::mcp_runtime::__private::FromToolCall>::describe(
                &__PARAMS[0usize],
                &mut __signature,
            );
            <Input as ::mcp_runtime::__private::FromToolCall>::describe(
                &__PARAMS[1usize],
                &mut __signature,
            );
            ::mcp_runtime::__private::ToolDef::new(
                    "pick_repo",
                    __signature,
                    move |mut __call: ::mcp_runtime::__private::ToolCall| {
                        ::mcp_runtime::__private::boxed(async move {
                            let __mcp_fn = pick_repo;
                            let team = <String as ::mcp_runtime::__private::FromToolCall>::from_tool_call(
                                &mut __call,
                                &__PARAMS[0usize],
                            )?;
                            let input = <Input as ::mcp_runtime::__private::FromToolCall>::from_tool_call(
                                &mut __call,
                                &__PARAMS[1usize],
                            )?;
                            ::mcp_runtime::__private::Result::<
                                _,
                                ::mcp_runtime::__private::ToolError,
                            >::Ok(__mcp_fn(team, input).await)
                        })
                    },
                )
                .description("Finds the user's repositories and lets them pick one.")
        }
    }
}
