//! Changing what a server serves at runtime: the [`Catalog`] handle
//! ([`Server::catalog`](crate::Server::catalog)), a batch of edits ([`CatalogChange`]) and
//! what applying it made ([`Applied`]), which other replicas hear of when it is announced.
//! See the guide's "Runtime tools" chapter.

pub use crate::server::{Applied, Catalog, CatalogChange};
