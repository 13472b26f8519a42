use mcp_runtime::prompt;

/// Summarizes a report.
#[prompt(task = "optional")]
async fn summarize(report: String) -> String {
    report
}

fn main() {}
