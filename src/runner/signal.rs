//! The drain's two signals (listeners closed, servers stopping): a cancellation token and
//! a flag set just before it is cancelled.
//!
//! Every response asks whether the listeners are closed (for `Connection: close`) and each
//! connection's loop whether the servers are stopping, after every poll. The token answers
//! that under its lock; the flag answers with one load. Only the drain cancels these, and it
//! goes through [`Signal::cancel`], so the flag and the token never disagree for longer than
//! that call.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// A cancellation token whose state is read without its lock (see the module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct Signal {
    token: CancellationToken,
    fired: Arc<AtomicBool>,
}

impl Signal {
    /// Sets the flag, then cancels the token (so a task woken by the token sees the flag).
    pub(crate) fn cancel(&self) {
        self.fired.store(true, Ordering::Release);
        self.token.cancel();
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.fired.load(Ordering::Acquire)
    }

    /// Completes once cancelled.
    pub(crate) fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.token.cancelled()
    }

    /// The token, for those that only wait on it.
    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_flag_is_set_when_the_token_wakes() {
        let signal = Signal::default();
        assert!(!signal.is_cancelled());
        let waiter = signal.clone();
        let woke = tokio::spawn(async move {
            waiter.cancelled().await;
            waiter.is_cancelled()
        });
        tokio::task::yield_now().await;
        signal.cancel();
        assert!(
            woke.await.unwrap(),
            "a task woken by the token sees the flag"
        );
        assert!(signal.is_cancelled() && signal.token().is_cancelled());
    }
}
