use mcp_runtime::resource;

/// Not a view URI.
#[resource("https://example.com/view.html", app)]
async fn web() -> &'static str {
    "<p>"
}

/// A view with a template variable, a MIME type of its own and an unknown permission.
#[resource("ui://views/{id}", app(permissions(camera, usb)), mime_type = "text/html")]
async fn by_id(id: String) -> String {
    id
}

fn main() {}
