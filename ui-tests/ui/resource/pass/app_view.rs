use mcp_runtime::{Server, resource, resources, tool, tools};

/// Shows the weather.
#[tool(ui = "ui://weather/view.html")]
async fn weather(city: String) -> String {
    city
}

/// The view, with every option.
#[resource(
    "ui://weather/view.html",
    app(
        prefers_border = false,
        domain = "weather.example",
        connect_domains("https://api.example"),
        resource_domains("https://cdn.example"),
        frame_domains("https://maps.example"),
        base_uri_domains("https://weather.example"),
        permissions(camera, microphone, geolocation, clipboard_write)
    )
)]
async fn view() -> &'static str {
    "<p>"
}

/// A bare view.
#[resource("ui://weather/bare.html", app)]
async fn bare() -> &'static str {
    "<p>"
}

fn main() {
    let server = Server::builder("x", "1.0")
        .tools(tools![weather])
        .resources(resources![view, bare])
        .build()
        .unwrap();
    drop(server);
}
