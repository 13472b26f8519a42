// A #[server] type whose name has braces in it (a const generic argument): the messages
// its list guards carry are text, not format strings.
use mcp_runtime::{Server, server};

struct Buf<const N: usize>;

#[server]
impl Buf<{ 2 + 2 }> {
    /// The buffer's size.
    #[tool]
    async fn size(&self) -> String {
        "4".into()
    }
}

fn main() {
    let server = Server::builder("t", "1").provider(Buf::<4>).build().unwrap();
    assert_eq!(server.tool_names(), ["size"]);
}
