//! The `stateless-mcp` reference server. All wiring lives in `stateless_mcp::app`.

use clap::Parser as _;
use stateless_mcp::app::{self, Config};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let config = Config::parse();
    let filter = EnvFilter::try_new(&config.log).unwrap_or_else(|e| {
        eprintln!(
            "stateless-mcp: invalid --log filter {:?}: {e}; using \"info\"",
            config.log
        );
        EnvFilter::new("info")
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    match app::serve(config).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("stateless-mcp: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
