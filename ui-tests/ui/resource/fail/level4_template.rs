use mcp_runtime::resource;

/// Files (the prefix modifier `:N` is level 4 and refused; explode `*` is accepted).
#[resource("file:///{path:3}")]
async fn file(path: String) -> String {
    path
}

fn main() {}
