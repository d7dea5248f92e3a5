//! Server-to-client notifications on a request's own stream: progress and log messages.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::JsonObject;
use super::ids::ProgressToken;

/// `notifications/progress`.
pub(crate) const PROGRESS_METHOD: &str = "notifications/progress";
/// `notifications/message`.
pub(crate) const LOG_MESSAGE_METHOD: &str = "notifications/message";

/// Log severities, lowest first (RFC 5424 order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debug.
    Debug,
    /// Info.
    Info,
    /// Notice.
    Notice,
    /// Warning.
    Warning,
    /// Error.
    Error,
    /// Critical.
    Critical,
    /// Alert.
    Alert,
    /// Emergency.
    Emergency,
}

/// Params of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProgressParams {
    /// The request's `progressToken`.
    #[serde(rename = "progressToken")]
    pub progress_token: ProgressToken,
    /// Progress so far; increases with each notification.
    pub progress: f64,
    /// Total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ProgressParams {
    /// Progress params.
    pub fn new(
        progress_token: ProgressToken,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Self {
        ProgressParams {
            progress_token,
            progress,
            total,
            message,
            meta: None,
        }
    }
}

/// Params of `notifications/message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LogMessageParams {
    /// Severity.
    pub level: LoggingLevel,
    /// Logger name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Any JSON value.
    pub data: Value,
    /// Metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl LogMessageParams {
    /// Log message params.
    pub fn new(level: LoggingLevel, logger: Option<String>, data: Value) -> Self {
        LogMessageParams {
            level,
            logger,
            data,
            meta: None,
        }
    }
}
