//! What a transport with one client per process (stdio) needs of a legacy session beyond
//! [`Legacy::handle`]: the client's answers to server-to-client requests are
//! delivered in this process only. Over HTTP an answer may land on any replica and is
//! forwarded over the bus to the one holding the request; a stdio client can only be
//! answering requests this process sent, so an answer naming another instance is late,
//! unknown or forged, and is dropped with a log line rather than published.

use bytes::Bytes;

use super::Legacy;
use crate::protocol::IdField;
use crate::server::envelope;

impl Legacy {
    /// A legacy client's JSON-RPC response `body` read on the input of the process whose
    /// session is `session_id`: handed to the request of that session waiting here, or
    /// dropped with a log line (late, duplicate, unknown, without a usable id, or the
    /// session no longer opens). Nothing is sent back: a response gets no answer.
    pub(crate) async fn answer_locally(&self, body: &Bytes, session_id: &str) {
        let id = match envelope::read(body) {
            Ok(m) => m.id,
            Err(_) => return tracing::info!("dropped an answer that is not a JSON-RPC message"),
        };
        let IdField::Valid(id) = id else {
            return tracing::info!("dropped an answer without a usable id");
        };
        let (session, _) = match self.session(None, Some(session_id), None).await {
            Ok(s) => s,
            Err(_) => {
                return tracing::info!(request_id = %id, "dropped an answer: the session no longer opens");
            }
        };
        let text = String::from_utf8_lossy(body).into_owned();
        self.state.pending.deliver_local(&id, &session.key, text);
    }
}
