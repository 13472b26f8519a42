use mcp_runtime::{Elicited, Form, Server, Error, prompt, prompts, resource, resources, server, tool, tools};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
#[serde(rename_all = "lowercase")]
enum Size {
    Small,
    Large,
}

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Order {
    size: Size,
    quantity: u32,
    gift: bool,
    note: Option<String>,
    price: f64,
}

/// Every kind of input.
#[tool]
#[needs_input]
async fn order(
    item: String,
    #[input(elicit = "How many {item}?")] order: Order,
    #[input(elicit = "Gift wrap?", key = "wrap")] wrap: Elicited<Order>,
    #[input(url = "https://example.com/pay", message = "Pay for {item}")] paid: Elicited<()>,
    #[input(sample = "Describe {item}", max_tokens = 50)] blurb: serde_json::Value,
    #[input(roots)] roots: Vec<serde_json::Value>,
) -> Result<String, Error> {
    let _ = (order, wrap, paid, blurb, roots);
    Ok(item)
}

/// A prompt that asks.
#[prompt]
#[needs_input]
async fn briefing(#[input(elicit = "Which order?")] order: Order) -> String {
    format!("{}", order.quantity)
}

/// A resource that asks.
#[resource("orders://{id}")]
#[needs_input]
async fn order_resource(id: u32, #[input(elicit = "Show order {id}?")] confirm: Order) -> String {
    format!("{id} {}", confirm.quantity)
}

struct Shop;

#[server]
impl Shop {
    /// A method that asks.
    #[tool]
    #[needs_input]
    async fn checkout(&self, #[input(elicit = "Confirm the order")] order: Order) -> String {
        order.quantity.to_string()
    }
}

fn main() {
    Server::builder("t", "1")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .tools(tools![order])
        .prompts(prompts![briefing])
        .resources(resources![order_resource])
        .provider(Shop)
        .build()
        .unwrap();
}
