//! Authorization settings of the reference server: off unless `--auth-issuer` (or
//! introspection) and `--resource` are set, and refused at start-up when incomplete.

use axum::Router;

use super::Config;
use crate::{Error, Server};

#[cfg(feature = "auth")]
pub(crate) type Auth = Option<crate::auth::ResourceServer>;
#[cfg(not(feature = "auth"))]
pub(crate) type Auth = Option<std::convert::Infallible>;

fn configured(config: &Config) -> bool {
    config.auth_issuer.is_some()
        || config.resource.is_some()
        || !config.auth_scopes.is_empty()
        || config.auth_jwks_uri.is_some()
        || config.auth_introspection_client_id.is_some()
        || config.auth_introspection_client_secret.is_some()
        || config.auth_introspection_url.is_some()
        || config.auth_dpop != super::config::DpopPolicy::Off
        || config.auth_dpop_nonce_secs.is_some()
}

#[cfg(feature = "auth")]
fn incomplete(what: &str) -> Error {
    Error::invalid_definition(format!("incomplete authorization settings: {what}"))
}

/// The resource server the settings describe, if any.
#[cfg(feature = "auth")]
pub(crate) fn resource_server(config: &Config, server: &Server) -> Result<Auth, Error> {
    use crate::auth::ResourceServer;
    if !configured(config) {
        return Ok(None);
    }
    let Some(resource) = &config.resource else {
        return Err(incomplete(
            "--resource (MCP_RESOURCE) is required with any --auth-* setting",
        ));
    };
    if config.auth_issuer.is_none() && config.auth_introspection_client_id.is_none() {
        return Err(incomplete(
            "set --auth-issuer (MCP_AUTH_ISSUER), or introspection with \
             --auth-introspection-client-id and --auth-introspection-url",
        ));
    }
    if config.auth_introspection_client_secret.is_some()
        && config.auth_introspection_client_id.is_none()
    {
        return Err(incomplete(
            "--auth-introspection-client-secret needs --auth-introspection-client-id",
        ));
    }
    let mut b = ResourceServer::builder(resource.clone())
        .required_scopes(config.auth_scopes.iter().map(|s| s.trim().to_owned()))
        .operation_scopes(server.clone())
        .leeway(std::time::Duration::from_secs(config.auth_leeway_secs))
        .allow_http(config.auth_allow_http);
    if let Some(i) = &config.auth_issuer {
        b = b.issuer(i.clone());
    }
    if let Some(u) = &config.auth_jwks_uri {
        b = b.jwks_uri(u.clone());
    }
    if let Some(id) = &config.auth_introspection_client_id {
        b = b.introspection(id.clone(), config.auth_introspection_client_secret.clone());
    }
    if let Some(u) = &config.auth_introspection_url {
        b = b.introspection_endpoint(u.clone());
    }
    if let Some(policy) = dpop(config, server)? {
        b = b.dpop(policy);
    }
    let rs = b.build().map_err(|e| incomplete(e.message()))?;
    tracing::info!(resource = %rs.resource(), "authorization on");
    Ok(Some(rs))
}

/// The DPoP policy of `--auth-dpop` and `--auth-dpop-nonce-secs`: proof `jti`s claimed in
/// the replay store every replica shares, nonces sealed with the server's key ring.
#[cfg(feature = "auth")]
fn dpop(config: &Config, server: &Server) -> Result<Option<crate::auth::Dpop>, Error> {
    use super::config::DpopPolicy;
    use crate::auth::Dpop;
    let policy = match config.auth_dpop {
        DpopPolicy::Off if config.auth_dpop_nonce_secs.is_some() => {
            return Err(incomplete(
                "--auth-dpop-nonce-secs needs --auth-dpop accept or require",
            ));
        }
        DpopPolicy::Off => return Ok(None),
        DpopPolicy::Accept => Dpop::accept(),
        DpopPolicy::Require => Dpop::require(),
    };
    let mut policy = policy.replay_store(super::bus::replay_store(config)?);
    if let Some(secs) = config.auth_dpop_nonce_secs {
        policy = policy.nonces(
            server.sealer().keys().clone(),
            std::time::Duration::from_secs(secs),
        );
    }
    Ok(Some(policy))
}

/// Without the `auth` feature, any authorization setting is an error.
#[cfg(not(feature = "auth"))]
pub(crate) fn resource_server(config: &Config, _server: &Server) -> Result<Auth, Error> {
    if configured(config) {
        return Err(Error::invalid_definition(
            "authorization settings given, but this build lacks the `auth` feature",
        ));
    }
    Ok(None)
}

/// `runner` with its endpoint protected when authorization is on.
pub(crate) fn protect_runner(auth: Auth, runner: crate::Runner) -> crate::Runner {
    match auth {
        #[cfg(feature = "auth")]
        Some(rs) => runner.auth(rs),
        #[cfg(not(feature = "auth"))]
        Some(never) => match never {},
        None => runner,
    }
}

/// `router`, protected when authorization is on.
pub(crate) fn protect(auth: Auth, router: Router) -> Router {
    match auth {
        #[cfg(feature = "auth")]
        Some(rs) => rs.protect(router),
        #[cfg(not(feature = "auth"))]
        Some(never) => match never {},
        None => router,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    fn config(args: &[&str]) -> Config {
        Config::try_parse_from(std::iter::once("stateless-mcp").chain(args.iter().copied()))
            .unwrap()
    }

    #[test]
    fn off_by_default_and_incomplete_settings_fail() {
        let server = Server::builder().build().unwrap();
        assert!(resource_server(&config(&[]), &server).unwrap().is_none());
        for args in [
            &["--auth-issuer", "https://as.example.com"][..],
            &["--resource", "https://mcp.example.com/mcp"][..],
            &["--auth-scopes", "mcp"][..],
        ] {
            let e = resource_server(&config(args), &server).unwrap_err();
            assert!(e.to_string().contains("authorization"), "{args:?}: {e}");
        }
    }

    #[cfg(feature = "auth")]
    #[test]
    fn complete_settings_build() {
        let server = Server::builder().build().unwrap();
        let c = config(&[
            "--auth-issuer",
            "https://as.example.com",
            "--resource",
            "https://mcp.example.com/mcp",
            "--auth-scopes",
            "mcp,files:read",
        ]);
        let rs = resource_server(&c, &server).unwrap().unwrap();
        assert_eq!(
            rs.metadata()["scopes_supported"],
            serde_json::json!(["files:read", "mcp"])
        );
    }
}
