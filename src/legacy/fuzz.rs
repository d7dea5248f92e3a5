//! The invariants of the legacy session id, for the fuzz targets (feature `fuzzing` only;
//! reached through [`crate::fuzzing`]). Panics when one breaks.

use std::time::Duration;

use super::session;
use super::session_cache::SessionCache;
use crate::protocol::ClientCapabilities;
use crate::server::fuzz::keys;
use crate::server::seal::Purpose;

/// A fuzzed legacy session id never opens; an issued one opens to what it was issued with;
/// one changed byte never opens; a `requestState` never opens as a session, nor a session
/// as a `requestState`.
pub(crate) fn session_round_trip(token: &str, version: &str, flip: usize) {
    let ttl = Duration::from_secs(3600);
    // Opened the way requests open them: through a replica's cache.
    let cache = SessionCache::default();
    let open = |token: &str| cache.open(keys(), Some(token), None, ttl);
    if let Ok(s) = open(token) {
        panic!(
            "a fuzzed session id opened: {token:?} -> {}",
            s.identity.protocol_version
        );
    }
    let caps = ClientCapabilities::default();
    let Ok(issued) = session::issue(keys(), version, &caps, None, None) else {
        return;
    };
    let opened = open(&issued).expect("an issued id opens");
    assert_eq!(opened.identity.protocol_version, version);
    assert!(
        keys().open_bytes(Purpose::REQUEST_STATE, &issued).is_err(),
        "a session id opened as a requestState"
    );
    if let Ok(state) = keys().seal_bytes(Purpose::REQUEST_STATE, version.as_bytes()) {
        assert!(
            open(&state).is_err(),
            "a requestState opened as a session id"
        );
    }
    let mut bytes = issued.into_bytes();
    let i = flip % bytes.len();
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(bytes).expect("ids are ASCII");
    assert!(
        open(&tampered).is_err(),
        "a tampered session id opened: {tampered}"
    );
}
