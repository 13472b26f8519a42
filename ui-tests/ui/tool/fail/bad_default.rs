use mcp_runtime::{Context, prompt, prompts, tool, tools};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Point {
    x: i32,
}

/// A default the schema cannot show: `Point` is not `Serialize`.
#[tool]
async fn plot(#[arg(default = Point { x: 0 })] at: Point) -> String {
    at.x.to_string()
}

/// `default` on an extractor, which is no argument.
#[tool]
async fn whoami(#[arg(default)] ctx: Context) -> String {
    let _ = ctx;
    String::new()
}

/// `default(..)` is not how a default is written.
#[tool]
async fn count(#[arg(default(3))] n: u32) -> String {
    n.to_string()
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
enum Units {
    Metric,
}

/// `default` alone on a type without `Default`: told at `default`.
#[tool]
async fn weigh(#[arg(default)] units: Units) -> String {
    let Units::Metric = units;
    String::new()
}

/// A mirrored argument with a default: the header would not carry the value used.
#[tool]
async fn shard(#[arg(header = "Region", default = "eu")] region: String) -> String {
    region
}

/// A string default for a number: told to write the number.
#[tool]
async fn repeat(#[arg(default = "5")] times: u32) -> String {
    times.to_string()
}

/// A default on an `Option`: the argument is never missing, so its type is the inner one.
#[tool]
async fn days(#[arg(default = 3)] n: Option<u8>) -> String {
    format!("{n:?}")
}

/// The same for a prompt argument.
#[prompt]
async fn greet(#[arg(default = "2")] times: u8) -> String {
    times.to_string()
}

fn main() {
    let _ = tools![plot, whoami, count, weigh, shard, repeat, days];
    let _ = prompts![greet];
}
