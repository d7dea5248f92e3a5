//! The `stateless-mcp` reference server. All wiring lives in `stateless_mcp::app`.

use stateless_mcp::app::{self, Config};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let config = match Config::load() {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let telemetry = match app::init_logging(&config) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("stateless-mcp: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let served = app::serve(config).await;
    // After the drain: export the spans still queued.
    telemetry.shutdown().await;
    match served {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("stateless-mcp: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
