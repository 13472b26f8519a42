use mcp_runtime::needs_input;

async fn complete_city(partial: String) -> Vec<String> {
    vec![partial]
}

#[needs_input]
async fn helper() -> String {
    complete_city("x".into()).await.join(",")
}

fn main() {}
