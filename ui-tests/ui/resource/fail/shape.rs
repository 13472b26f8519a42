use mcp_runtime::resource;

/// An `extern` resource.
#[resource("config://abi")]
extern "C" fn abi() -> String {
    String::new()
}

/// A resource whose error cannot cross threads.
#[resource("config://error")]
async fn error() -> Result<String, Box<dyn std::error::Error>> {
    Ok(String::new())
}

fn main() {}
