//! The `stateless-mcp` reference server. All wiring lives in `stateless_mcp::app`.

use stateless_mcp::app::{self, Config};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let config = match Config::load() {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    if let Err(e) = app::init_logging(&config) {
        eprintln!("stateless-mcp: {e}");
        return std::process::ExitCode::FAILURE;
    }
    match app::serve(config).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("stateless-mcp: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
