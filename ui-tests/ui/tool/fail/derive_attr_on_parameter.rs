use mcp_runtime::tool;

/// Looks a city up.
#[tool]
async fn lookup(
    #[serde(rename = "cityName")] city: String,
    #[schemars(range(min = 1, max = 10))] n: u8,
) -> String {
    format!("{city} {n}")
}

fn main() {}
