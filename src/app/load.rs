//! Loading a [`Config`]: flags and environment (clap), the optional TOML file under them,
//! validation with messages that name the bad setting, and the effective configuration with
//! secrets redacted.

use std::collections::BTreeMap;
use std::ffi::OsString;

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{Arg, ArgMatches, Command, CommandFactory as _, FromArgMatches as _};

use super::Config;
use super::effective::{REDACTED, Setting, Source, Sources};

/// The shortest `--admin-token` accepted.
const MIN_ADMIN_TOKEN: usize = 16;

/// Settings that are not config-file keys.
const NOT_IN_FILE: &[&str] = &["config", "help", "version"];

fn is_secret(arg: &Arg) -> bool {
    arg.is_hide_env_values_set()
}

/// `--flag (ENV)`: how a setting is named in messages.
fn display_name(arg: &Arg) -> String {
    let flag = arg
        .get_long()
        .map_or_else(|| arg.get_id().to_string(), |l| format!("--{l}"));
    match arg.get_env() {
        Some(env) => format!("{flag} ({})", env.to_string_lossy()),
        None => flag,
    }
}

fn file_values(key: &str, value: &toml::Value) -> Result<Vec<String>, String> {
    let scalar = |v: &toml::Value| match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        _ => Err(format!(
            "setting `{key}` must be a string, number, boolean or array of them"
        )),
    };
    match value {
        toml::Value::Array(items) => items.iter().map(scalar).collect(),
        v => scalar(v).map(|s| vec![s]),
    }
}

/// Reads the config file into validated values per argument id.
fn read_file(
    cmd: &Command,
    path: &std::path::Path,
) -> Result<BTreeMap<String, Vec<String>>, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read config file {shown}: {e}"))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| format!("invalid TOML in config file {shown}: {e}"))?;
    let mut out = BTreeMap::new();
    for (key, value) in &table {
        let id = key.replace('-', "_");
        let arg = cmd
            .get_arguments()
            .find(|a| a.get_id() == id.as_str() && !NOT_IN_FILE.contains(&id.as_str()))
            .ok_or_else(|| {
                let known: Vec<String> = cmd
                    .get_arguments()
                    .map(|a| a.get_id().to_string())
                    .filter(|id| !NOT_IN_FILE.contains(&id.as_str()))
                    .collect();
                format!(
                    "unknown setting `{key}` in config file {shown}; known settings: {}",
                    known.join(", ")
                )
            })?;
        let values = file_values(key, value).map_err(|e| format!("{e} (config file {shown})"))?;
        for v in &values {
            check_value(arg, v)
                .map_err(|why| format!("setting `{key}` in config file {shown}: {why}"))?;
        }
        out.insert(id, values);
    }
    Ok(out)
}

/// Runs `arg`'s own value parser on `value`.
fn check_value(arg: &Arg, value: &str) -> Result<(), String> {
    let long = arg.get_long().unwrap_or_else(|| arg.get_id().as_str());
    Command::new("check")
        .no_binary_name(true)
        .arg(arg.clone().long(long.to_owned()).env(None::<&str>))
        .try_get_matches_from([format!("--{long}={value}")])
        .map(drop)
        .map_err(|e| {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            first.trim_start_matches("error: ").to_owned()
        })
}

fn sources(
    cmd: &Command,
    matches: &ArgMatches,
    from_file: &BTreeMap<String, Vec<String>>,
) -> Sources {
    let mut out = Vec::new();
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if matches!(id, "help" | "version") {
            continue;
        }
        let Some(raw) = matches.get_raw(id) else {
            continue;
        };
        let value = if is_secret(arg) {
            REDACTED.to_owned()
        } else {
            raw.map(|v| v.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(",")
        };
        let source = match matches.value_source(id) {
            Some(ValueSource::CommandLine) => Source::Flag,
            Some(ValueSource::EnvVariable) => Source::Env,
            _ if from_file.contains_key(id) => Source::File,
            _ => Source::Default,
        };
        out.push(Setting {
            name: id.to_owned(),
            value,
            source,
        });
    }
    Sources(out)
}

impl Config {
    /// Loads the settings from the process's arguments and environment, and the config file
    /// they name. On error (or `--help`/`--version`), call [`clap::Error::exit`].
    pub fn load() -> Result<Config, clap::Error> {
        Self::load_from(std::env::args_os())
    }

    /// Loads the settings from `args` (the first is the program name) and the process
    /// environment, then the config file they name (`--config`/`MCP_CONFIG`) for every
    /// setting neither gives, then checks them. Errors name the bad setting.
    pub fn load_from<I, T>(args: I) -> Result<Config, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let mut cmd = Config::command();
        let first = cmd.try_get_matches_from_mut(args.iter().cloned())?;
        let mut from_file = BTreeMap::new();
        if let Some(path) = first.get_one::<std::path::PathBuf>("config") {
            from_file =
                read_file(&cmd, path).map_err(|msg| cmd.error(ErrorKind::ValueValidation, msg))?;
            // File values become defaults, under flags and environment variables.
            cmd = Config::command();
            for (id, values) in &from_file {
                let values = values.clone();
                cmd = cmd.mut_arg(id, |a| {
                    let secret = is_secret(&a);
                    a.default_values(values).hide_default_value(secret)
                });
            }
        }
        let matches = cmd.try_get_matches_from_mut(args)?;
        let mut config = Config::from_arg_matches(&matches)?;
        config.sources = sources(&cmd, &matches, &from_file);
        config
            .validate(&cmd)
            .map_err(|msg| cmd.error(ErrorKind::ValueValidation, msg))?;
        Ok(config)
    }

    /// The effective settings, in declaration order, secrets redacted.
    pub fn effective(&self) -> &[Setting] {
        &self.sources.0
    }

    /// The effective settings as one line: `name=value(source) …`.
    pub fn effective_line(&self) -> String {
        self.effective()
            .iter()
            .map(|s| format!("{}={}({})", s.name, s.value, s.source.as_str()))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Checks what clap's value parsers cannot: relations between settings.
    fn validate(&self, cmd: &Command) -> Result<(), String> {
        let name = |id: &str| {
            cmd.get_arguments()
                .find(|a| a.get_id() == id)
                .map_or_else(|| id.to_owned(), display_name)
        };
        if !self.path.starts_with('/') {
            return Err(format!(
                "invalid value {:?} for {}: the endpoint path must start with '/'",
                self.path,
                name("path")
            ));
        }
        if self.admin_listen.is_none() {
            let reserved = [
                crate::observability::HEALTHZ_PATH,
                crate::observability::READYZ_PATH,
                crate::observability::METRICS_PATH,
            ];
            if reserved.contains(&self.path.as_str()) {
                return Err(format!(
                    "invalid value {:?} for {}: it is taken by the health and metrics routes \
                     (set --admin-listen to serve those elsewhere)",
                    self.path,
                    name("path")
                ));
            }
        }
        #[cfg(feature = "reference-server")]
        if let Err(e) = tracing_subscriber::EnvFilter::try_new(&self.log) {
            return Err(format!(
                "invalid value {:?} for {}: {e}",
                self.log,
                name("log")
            ));
        }
        if !self.rate_limit_tools.is_empty() && self.rate_limit.is_none() {
            return Err(format!(
                "{} needs {}: tool budgets are charged besides the caller's",
                name("rate_limit_tools"),
                name("rate_limit")
            ));
        }
        if self.runtime_tools {
            let token = self.admin_token.as_deref().unwrap_or_default();
            if token.chars().count() < MIN_ADMIN_TOKEN {
                // Never the value: it is a secret.
                return Err(format!(
                    "{} needs {} of at least {MIN_ADMIN_TOKEN} characters: its admin routes \
                     change what every replica serves",
                    name("runtime_tools"),
                    name("admin_token")
                ));
            }
        }
        if self.admin_listen == Some(self.listen) && self.listen.port() != 0 {
            return Err(format!(
                "invalid value {} for {}: it must differ from {}",
                self.listen,
                name("admin_listen"),
                name("listen")
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(args: &[&str]) -> Result<Config, String> {
        let mut all = vec!["stateless-mcp"];
        all.extend_from_slice(args);
        Config::load_from(all).map_err(|e| e.to_string())
    }

    fn file(text: &str) -> tempfile_path::TempToml {
        tempfile_path::TempToml::new(text)
    }

    /// A TOML file in the target directory, removed on drop.
    mod tempfile_path {
        use std::path::PathBuf;
        use std::sync::atomic::{AtomicUsize, Ordering};

        pub(super) struct TempToml(pub(super) PathBuf);

        impl TempToml {
            pub(super) fn new(text: &str) -> Self {
                static N: AtomicUsize = AtomicUsize::new(0);
                let dir = std::env::temp_dir();
                let path = dir.join(format!(
                    "stateless-mcp-config-{}-{}.toml",
                    std::process::id(),
                    N.fetch_add(1, Ordering::Relaxed)
                ));
                std::fs::write(&path, text).unwrap();
                TempToml(path)
            }

            pub(super) fn arg(&self) -> &str {
                self.0.to_str().unwrap()
            }
        }

        impl Drop for TempToml {
            fn drop(&mut self) {
                let _ = std::fs::remove_file(&self.0);
            }
        }
    }

    fn setting<'a>(c: &'a Config, name: &str) -> &'a Setting {
        c.effective().iter().find(|s| s.name == name).unwrap()
    }

    #[test]
    fn defaults_load_and_are_reported() {
        let c = load(&[]).unwrap();
        assert_eq!(c.page_size, 100);
        assert_eq!(setting(&c, "page_size").source, Source::Default);
        assert_eq!(setting(&c, "page_size").value, "100");
        assert!(c.effective().iter().all(|s| s.name != "help"));
    }

    #[test]
    fn the_file_fills_in_and_flags_override_it() {
        let f = file("page_size = 7\nlist-ttl-ms = 9\nallowed_hosts = [\"a\", \"b\"]\n");
        let c = load(&["--config", f.arg(), "--list-ttl-ms", "11"]).unwrap();
        assert_eq!(c.page_size, 7);
        assert_eq!(setting(&c, "page_size").source, Source::File);
        assert_eq!(c.list_ttl_ms, 11);
        assert_eq!(setting(&c, "list_ttl_ms").source, Source::Flag);
        assert_eq!(c.allowed_hosts, ["a", "b"]);
        assert_eq!(setting(&c, "allowed_hosts").value, "a,b");
    }

    #[test]
    fn unknown_file_keys_are_rejected_by_name() {
        let f = file("page_sise = 7\n");
        let e = load(&["--config", f.arg()]).unwrap_err();
        assert!(e.contains("unknown setting `page_sise`"), "{e}");
        let f = file("config = \"x.toml\"\n");
        assert!(
            load(&["--config", f.arg()])
                .unwrap_err()
                .contains("unknown setting `config`")
        );
    }

    #[test]
    fn bad_file_values_name_the_setting() {
        let f = file("page_size = 0\n");
        let e = load(&["--config", f.arg()]).unwrap_err();
        assert!(e.contains("setting `page_size`"), "{e}");
        let f = file("listen = { port = 1 }\n");
        let e = load(&["--config", f.arg()]).unwrap_err();
        assert!(e.contains("setting `listen` must be"), "{e}");
        let f = file("not toml at all [");
        assert!(
            load(&["--config", f.arg()])
                .unwrap_err()
                .contains("invalid TOML")
        );
        let e = load(&["--config", "/nonexistent/stateless-mcp.toml"]).unwrap_err();
        assert!(e.contains("cannot read config file"), "{e}");
    }

    #[test]
    fn bad_values_name_the_setting() {
        let e = load(&["--page-size", "0"]).unwrap_err();
        assert!(e.contains("--page-size"), "{e}");
        let e = load(&["--path", "mcp"]).unwrap_err();
        assert!(e.contains("--path (MCP_PATH)"), "{e}");
        let e = load(&["--path", "/healthz"]).unwrap_err();
        assert!(e.contains("--path"), "{e}");
        load(&["--path", "/healthz", "--admin-listen", "127.0.0.1:0"]).unwrap();
        let e = load(&["--log", "a=b=c"]).unwrap_err();
        assert!(e.contains("--log (MCP_LOG)"), "{e}");
        let e = load(&["--listen", "127.0.0.1:9", "--admin-listen", "127.0.0.1:9"]).unwrap_err();
        assert!(e.contains("--admin-listen"), "{e}");
    }

    #[test]
    fn runtime_tools_need_an_admin_token() {
        const TOKEN: &str = "a-long-admin-token-93b1";
        let e = load(&["--runtime-tools"]).unwrap_err();
        assert!(e.contains("--admin-token (MCP_ADMIN_TOKEN)"), "{e}");
        let e = load(&["--runtime-tools", "--admin-token", "short-secret"]).unwrap_err();
        assert!(
            e.contains("at least 16") && !e.contains("short-secret"),
            "{e}"
        );
        let c = load(&["--runtime-tools", "--admin-token", TOKEN]).unwrap();
        assert_eq!(c.admin_token.as_deref(), Some(TOKEN));
        assert_eq!(setting(&c, "admin_token").value, REDACTED);
        assert!(!c.effective_line().contains(TOKEN));
        // Without --runtime-tools no token is needed.
        assert!(load(&[]).is_ok());
    }

    #[test]
    fn secrets_are_redacted() {
        const K1: &str = "k1:c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=";
        const K0: &str = "k0:b2xkb2xkb2xkb2xkb2xkb2xkb2xkb2xkb2xkb2xkMTI=";
        let c = load(&["--state-keys", &format!("{K1},{K0}")]).unwrap();
        assert_eq!(c.state_keys, [K1, K0]);
        assert_eq!(c.state_key_ring().unwrap().unwrap().ids().count(), 2);
        let bad = load(&["--state-keys", "k1:c2VjcmV0"]).unwrap();
        let e = bad.state_key_ring().unwrap_err().to_string();
        assert!(e.contains("--state-keys") && e.contains("bytes"), "{e}");
        assert!(!e.contains("c2VjcmV0"), "{e}");
        let s = setting(&c, "state_keys");
        assert_eq!(s.value, REDACTED);
        assert!(!c.effective_line().contains("c2VjcmV0"));
        let f = file(&format!("state_keys = [\"{K1}\"]\n"));
        let c = load(&["--config", f.arg()]).unwrap();
        assert_eq!(setting(&c, "state_keys").value, REDACTED);
        assert!(!format!("{:?}", c.effective()).contains("c2VjcmV0"));
    }
}
