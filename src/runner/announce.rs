//! Announcing the server's list fingerprints once it serves.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::Server;

/// Announces the server's list fingerprints on its bus once it can (a broker-backed bus may
/// still be connecting: retried with backoff up to 5 s apart, until `stop`), so replicas
/// running other versions tell their listen streams.
pub(super) fn spawn(server: Server, stop: CancellationToken) {
    tokio::spawn(async move {
        let mut delay = Duration::from_millis(100);
        loop {
            match server.announce_lists().await {
                Ok(()) => {
                    let fp = server.list_fingerprints();
                    tracing::info!(tools = %fp.tools, prompts = %fp.prompts, resources = %fp.resources, "announced list fingerprints");
                    return;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "list fingerprints not announced yet; retrying")
                }
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(delay) => {}
            }
            delay = (delay * 2).min(Duration::from_secs(5));
        }
    });
}
