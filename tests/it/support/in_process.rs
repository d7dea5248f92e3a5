//! The in-process client (`stateless_mcp::testing`) as the project's tests use it: every
//! message it receives is checked against the 2026-07-28 schema.

use stateless_mcp::Server;
use stateless_mcp::testing::TestClient;

use super::schema;

/// A [`TestClient`] of `server` that validates every message it receives.
pub fn client(server: Server) -> TestClient {
    TestClient::new(server)
        .on_message(|method, message| schema::check_message(message, Some(method)))
}
