//! The expansions of the README examples, kept under review: each case's output is
//! formatted (prettyplease) and compared with `mcp-macros/expand/<case>.rs`, so any change
//! to the generated code shows up as a diff in review. `MCP_UPDATE_SNAPSHOTS=1 cargo test
//! -p mcp-macros` rewrites the files after an intended change.

use crate::attr::Kind;
use proc_macro2::TokenStream;
use quote::quote;
use std::path::PathBuf;

/// One case: the macro, its arguments and the item, as written in the README.
struct Case {
    name: &'static str,
    expand: fn(TokenStream, TokenStream) -> TokenStream,
    args: TokenStream,
    item: TokenStream,
}

fn derive(_args: TokenStream, item: TokenStream) -> TokenStream {
    super::form::expand(item)
}

fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    super::free(Kind::Tool, args, item)
}

fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    super::free(Kind::Resource, args, item)
}

fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    super::free(Kind::Prompt, args, item)
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "weather_tool",
            expand: tool,
            args: quote!(),
            item: quote! {
                /// Current weather for a location, personalised for the GitHub user.
                #[needs_input]
                async fn get_weather(
                    location: String,
                    #[input(elicit = "Who is asking about {location}?")] user: GitHub,
                ) -> String {
                    format!("Sunny in {location}, @{}", user.login)
                }
            },
        },
        Case {
            name: "weather_form",
            expand: derive,
            args: quote!(),
            item: quote! {
                struct GitHub {
                    /// Your GitHub login
                    login: String,
                }
            },
        },
        Case {
            name: "pick_repo_tool",
            expand: tool,
            args: quote!(),
            item: quote! {
                /// Finds the user's repositories and lets them pick one.
                async fn pick_repo(team: String, input: Input) -> Result<String, Error> {
                    let members = input.step("members", async { vec!["ada".to_string()] }).await?;
                    let who: Login = input.elicit("login", format!("Which of {members:?} are you?")).await?.accepted()?;
                    let pick: Pick = input.elicit("repo", format!("Which repository of {}?", who.login)).await?.accepted()?;
                    Ok(format!("{} in {team}", pick.repo))
                }
            },
        },
        Case {
            name: "forecast_resource",
            expand: resource,
            args: quote!("weather://{city}/forecast", mime_type = "text/plain"),
            item: quote! {
                /// Three-day forecast for a city.
                async fn forecast(city: String) -> String {
                    format!("{city}: sun, clouds, rain")
                }
            },
        },
        Case {
            name: "weather_report_prompt",
            expand: prompt,
            args: quote!(),
            item: quote! {
                /// Asks the model for a weather report.
                async fn weather_report(city: String) -> PromptMessage {
                    PromptMessage::user(format!("Write a short weather report for {city}."))
                }
            },
        },
        Case {
            name: "notes_server",
            expand: super::server::expand,
            args: quote!(),
            item: quote! {
                impl Notes {
                    /// Returns one note.
                    #[tool(annotations(read_only_hint = true))]
                    async fn get_note(&self, id: u64) -> Result<Json<Note>, Error> {
                        self.find(id)
                    }
                }
            },
        },
    ]
}

fn render(case: &Case) -> String {
    let out = (case.expand)(case.args.clone(), case.item.clone());
    let file: syn::File = syn::parse2(out.clone())
        .unwrap_or_else(|e| panic!("{}: the expansion does not parse: {e}\n{out}", case.name));
    format!(
        "// The expansion of `{}` (mcp-macros/src/expand/snapshots.rs). Generated: do not edit;\n\
         // MCP_UPDATE_SNAPSHOTS=1 cargo test -p mcp-macros rewrites it.\n\n{}",
        case.name,
        prettyplease::unparse(&file)
    )
}

#[test]
fn expansions_match_the_committed_files() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("expand");
    let update = std::env::var("MCP_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    for case in cases() {
        let path = dir.join(format!("{}.rs", case.name));
        let new = render(&case);
        assert!(
            !new.contains("compile_error"),
            "{}: the example does not expand cleanly:\n{new}",
            case.name
        );
        match std::fs::read_to_string(&path) {
            Ok(old) if old == new => {}
            _ if update => {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &new).unwrap();
            }
            _ => stale.push(format!("--- {}\n{new}", path.display())),
        }
    }
    assert!(
        stale.is_empty(),
        "expansions changed; review, then rerun with MCP_UPDATE_SNAPSHOTS=1 and commit:\n{}",
        stale.join("\n")
    );
}
