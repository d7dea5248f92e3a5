//! The effective configuration: each setting's value and where it came from ([`Setting`],
//! [`Source`]), secrets shown as [`REDACTED`]. Filled in while loading, kept in the
//! [`Config`](super::Config) it describes.

/// Where a setting's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Source {
    /// A command-line flag.
    Flag,
    /// An environment variable.
    Env,
    /// The `--config` file.
    File,
    /// The built-in default.
    Default,
}

impl Source {
    /// The source as the effective-configuration line names it: `flag`, `env`, `file` or
    /// `default`.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Source::Flag => "flag",
            Source::Env => "env",
            Source::File => "file",
            Source::Default => "default",
        }
    }
}

/// One setting of the effective configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Setting {
    /// The setting's name: its flag without dashes, underscored (`body_limit`), which is
    /// also its key in the config file.
    pub name: String,
    /// Its value as given (comma-joined for lists), or `<redacted>` for a secret.
    pub value: String,
    /// Where the value came from.
    pub source: Source,
}

/// The effective settings of a loaded [`Config`](super::Config), in declaration order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sources(pub(super) Vec<Setting>);

/// Shown instead of a secret's value.
pub const REDACTED: &str = "<redacted>";
