//! Transports. Each hands messages to [`Server::handle`](crate::Server::handle) and relays
//! what it returns (see [`crate::extend`] to write another).

pub mod http;
pub mod stdio;
