use mcp_runtime::prompt;

/// Every rule on a prompt's shape and parameters, reported at once.
#[prompt]
async unsafe fn greet<T>(
    who: &str,
    how: impl std::fmt::Display,
    #[cfg(any())] extra: String,
    _: ...
) -> String {
    format!("{how} {who}")
}

fn main() {}
