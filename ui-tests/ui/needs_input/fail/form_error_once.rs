use mcp_runtime::{Elicited, Form, tool, tools};

/// A form that is not one: only the derive's error shows, not one more at each use.
#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Pair(String, String);

/// A generic form: the same.
#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Wrapped<T> {
    value: T,
}

/// A string enum with a field.
#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
enum Size {
    Small,
    Custom(u32),
}

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Order {
    size: Size,
}

/// Asks for all of them.
#[tool]
#[needs_input]
async fn ask(
    #[input(elicit = "Pair?")] pair: Pair,
    #[input(elicit = "Value?", key = "w")] wrapped: Elicited<Wrapped<u32>>,
    #[input(elicit = "Order?", key = "o")] order: Order,
) -> String {
    let _ = (pair, wrapped, order);
    String::new()
}

fn main() {
    let _ = tools![ask];
}
