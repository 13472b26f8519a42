use mcp_runtime::tool;

/// Reports the weather.
#[tool]
async fn météo(city: String) -> String {
    city
}

fn main() {}
