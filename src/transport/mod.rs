//! Transports. Each reuses [`crate::server`] unchanged.

pub mod http;
pub mod stdio;
