//! Transports. Each reuses [`crate::server`] unchanged.

pub mod http;
