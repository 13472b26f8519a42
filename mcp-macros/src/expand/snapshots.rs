//! The expansions of the README examples, kept under review: each case's output is
//! formatted (prettyplease) and compared with the insta snapshot
//! `mcp-macros/expand/<case>.snap`, so any change to the generated code fails with a diff;
//! `cargo insta review` accepts an intended change.

use crate::attr::Kind;
use proc_macro2::TokenStream;
use quote::quote;

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
                    #[arg(header = "Location")] location: String,
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
    prettyplease::unparse(&file)
}

#[test]
fn expansions_match_the_snapshots() {
    for case in cases() {
        let expansion = render(&case);
        assert!(
            !expansion.contains("compile_error"),
            "{}: the example does not expand cleanly:\n{expansion}",
            case.name
        );
        insta::with_settings!({
            snapshot_path => "../../expand",
            prepend_module_to_snapshot => false,
            omit_expression => true,
            description => format!("The expansion of `{}` (mcp-macros/src/expand/snapshots.rs)", case.name),
        }, {
            insta::assert_snapshot!(case.name, expansion);
        });
    }
}
