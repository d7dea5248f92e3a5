//! This replica's list versions as a stream saw them, and which list-changed notifications
//! a stream owes when they differ: shared by the fan-out, listen streams and the legacy
//! GET stream.

use std::sync::Arc;

use tokio::sync::watch;

use crate::notify::ListFingerprints;
use crate::protocol::{PROMPTS_LIST_CHANGED, RESOURCES_LIST_CHANGED, TOOLS_LIST_CHANGED};

/// The list-changed notifications a stream that follows the tool, prompt and resource lists
/// (`follows`, in that order) owes when another replica announced its lists: `diff` is
/// `(ours, theirs)`, and the lists that differ are owed; `None` for a resync (any list may
/// have changed).
pub(crate) fn changed_lists(
    follows: [bool; 3],
    diff: Option<(&ListFingerprints, &ListFingerprints)>,
) -> impl Iterator<Item = &'static str> {
    let differs = diff.map_or([true; 3], |(ours, theirs)| {
        [
            theirs.tools != ours.tools,
            theirs.prompts != ours.prompts,
            theirs.resources != ours.resources,
        ]
    });
    [
        TOOLS_LIST_CHANGED,
        PROMPTS_LIST_CHANGED,
        RESOURCES_LIST_CHANGED,
    ]
    .into_iter()
    .zip(follows)
    .zip(differs)
    .filter_map(|((method, follows), differs)| (follows && differs).then_some(method))
}

/// A view of this replica's list fingerprints: the ones last reported against (`seen`), and
/// the watch a runtime change updates.
pub(crate) struct Versions {
    rx: Option<watch::Receiver<Arc<ListFingerprints>>>,
    pub(crate) seen: Arc<ListFingerprints>,
}

impl Versions {
    pub(crate) fn new(mut rx: watch::Receiver<Arc<ListFingerprints>>) -> Self {
        let seen = rx.borrow_and_update().clone();
        Versions { rx: Some(rx), seen }
    }

    /// Waits for this replica's lists to change and returns the fingerprints from before
    /// (`seen` is then the new ones); never returns once the server is gone.
    pub(crate) async fn changed(&mut self) -> Arc<ListFingerprints> {
        let Some(rx) = &mut self.rx else {
            return std::future::pending().await;
        };
        if rx.changed().await.is_err() {
            self.rx = None;
            return std::future::pending().await;
        }
        let now = rx.borrow_and_update().clone();
        std::mem::replace(&mut self.seen, now)
    }
}
