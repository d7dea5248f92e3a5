//! [`Settings`]: the reference server's deployment settings, loaded by your own binary.

use crate::app::{self, Config};
use crate::observability::Readiness;
use crate::{Error, Runner, Server, ServerBuilder, StreamableHttp};

/// What the reference server reads from its environment, for your own binary: the same
/// `MCP_*` variables and TOML config file (`MCP_CONFIG`), with the same names, defaults,
/// checks and precedence (environment over file over default), so the shipped Kubernetes
/// and compose files configure your server as they do the reference one. (Feature `config`.)
///
/// - [`apply`](Self::apply): the key ring that seals `requestState` (`MCP_STATE_KEYS`), the
///   bus (`MCP_BUS`, `MCP_BUS_PREFIX`, `MCP_BUS_CAPACITY`, `MCP_BUS_READINESS`), the replay,
///   session and task stores, TTLs, page size, list caching, legacy clients, tasks and
///   listen-stream limits, onto your server builder;
/// - [`endpoint`](Self::endpoint): path, body limit and timeout, keepalive, in-flight
///   bound, rate limit, allowed hosts and origins (and CORS for those origins);
/// - [`runner`](Self::runner): the endpoint served with the listen and admin addresses,
///   authorization (`MCP_AUTH_*`, `MCP_RESOURCE`), connection limits, drain timings and
///   `/readyz` with the bus's condition.
///
/// The reference server's own settings (fixtures, log set-up, transport, runtime tools) are
/// read and checked, and otherwise left alone.
///
/// ```no_run
/// use stateless_mcp::Server;
/// use stateless_mcp::settings::Settings;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let settings = Settings::from_env()?;
/// // Your definitions (`.tool(…)`, `.state(…)`) go on the builder as usual.
/// let server = settings.apply(Server::builder())?.build()?;
/// settings.runner(server)?.serve().await?;
/// # Ok(()) }
/// ```
pub struct Settings {
    config: Config,
    readiness: Readiness,
}

impl std::fmt::Debug for Settings {
    /// Every setting with where it came from, secrets redacted.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.config.effective_line())
    }
}

/// ` (MCP_X)` for the setting whose flag `message` names without its variable (clap's
/// messages name the flag, which a binary of your own does not have), else nothing.
fn variable_named(message: &str) -> String {
    use clap::CommandFactory as _;
    Config::command()
        .get_arguments()
        .filter_map(|arg| Some((arg.get_long()?, arg.get_env()?)))
        .find(|(long, _)| {
            message
                .match_indices(&format!("--{long}"))
                .any(|(at, flag)| {
                    // The whole flag (`--rate-limit`, not the start of `--rate-limit-burst`).
                    let next = message[at + flag.len()..].chars().next();
                    !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
                })
        })
        .filter(|(_, env)| !message.contains(&*env.to_string_lossy()))
        .map(|(_, env)| format!(" ({})", env.to_string_lossy()))
        .unwrap_or_default()
}

impl Settings {
    /// Loads the settings from the `MCP_*` environment variables and the TOML file that
    /// `MCP_CONFIG` names (keys as the reference server's flags: `page_size = 50`), and checks
    /// them. The error names the bad setting as the reference server does: its flag, then
    /// the variable (`--page-size (MCP_PAGE_SIZE)`).
    pub fn from_env() -> Result<Settings, Error> {
        let config = Config::load_from(["stateless-mcp"]).map_err(|e| {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            let first = first.trim_start_matches("error: ");
            Error::invalid_definition(format!(
                "settings from the environment: {first}{}",
                variable_named(first)
            ))
        })?;
        Ok(Settings {
            config,
            readiness: Readiness::new(),
        })
    }

    /// `builder` with the server settings applied (they replace what `builder` had for the
    /// same things: the notifier, stores, key ring, limits). A broker-backed bus starts
    /// connecting in the background (so call this within a Tokio runtime) and reports its
    /// state to [`readiness`](Self::readiness) as the condition `bus` (advisory with
    /// `MCP_BUS_READINESS=report`).
    ///
    /// Without `MCP_STATE_KEYS`, a server on a shared bus is then refused by
    /// [`ServerBuilder::build`]: every replica must seal with the same keys.
    pub fn apply(&self, builder: ServerBuilder) -> Result<ServerBuilder, Error> {
        app::apply(&self.config, builder, Some(&self.readiness))
    }

    /// The endpoint for `server` with the HTTP settings. Fails when the rate-limit store
    /// (`MCP_RATE_LIMIT_STORE`) is not one this build can open.
    pub fn endpoint(&self, server: Server) -> Result<StreamableHttp, Error> {
        app::endpoint(&self.config, server)
    }

    /// A runner for `server` with every serving setting: the [`endpoint`](Self::endpoint),
    /// listen and admin addresses, authorization, connection limits, drain timings, the
    /// `x-mcp-replica` response header (`MCP_REPLICA_ID`) and [`readiness`](Self::readiness)
    /// on `/readyz`. Fails when the authorization settings are incomplete.
    pub fn runner(&self, server: Server) -> Result<Runner, Error> {
        app::runner(
            &self.config,
            server,
            self.readiness.clone(),
            #[cfg(feature = "prometheus")]
            None,
        )
    }

    /// The readiness the bus reports to (the [`runner`](Self::runner) serves it on
    /// `/readyz`; serving yourself, serve it with
    /// [`health_router`](crate::observability::health_router)).
    pub fn readiness(&self) -> &Readiness {
        &self.readiness
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_naming_a_flag_gets_its_variable() {
        assert_eq!(
            variable_named(
                "invalid value '0' for '--page-size <PAGE_SIZE>': 0 is not in 1..=10000"
            ),
            " (MCP_PAGE_SIZE)"
        );
        assert_eq!(
            variable_named("invalid value 'x' for '--rate-limit-burst <RATE_LIMIT_BURST>'"),
            " (MCP_RATE_LIMIT_BURST)"
        );
        assert_eq!(
            variable_named("invalid value \"mcp\" for --path (MCP_PATH): must start with '/'"),
            ""
        );
        assert_eq!(variable_named("no flag here"), "");
    }
}
