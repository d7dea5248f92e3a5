//! Sealed `requestState`: handler state carried by the client between the rounds of a
//! multi-round-trip request, encrypted and authenticated so that any replica holding the same
//! key ring can open it and nobody else can read or alter it.
//!
//! Three concepts, one file each: the key ring and its parsing (`keys`), what a state is
//! bound to (`binding`: canonical JSON, digests), and sealing and opening (`sealed`: the
//! AEAD token of one [`Purpose`](sealed::Purpose); `state`: the `requestState` payload and
//! its checks). Another kind of token (a legacy session, a task handle) gets its own
//! purpose, so it can never open as a `requestState`.
//!
//! # Token format
//!
//! ```text
//! v1.<kid>.<base64url(nonce ‖ ciphertext ‖ tag)>
//! ```
//!
//! - `kid`: the id of the key that sealed it (1–16 of `A-Z a-z 0-9 _ -`).
//! - AEAD: XChaCha20-Poly1305, 256-bit key, a random 192-bit nonce per token, 128-bit tag;
//!   the associated data is `stateless-mcp/<purpose>/v1.<kid>`, for `requestState`
//!   `stateless-mcp/requestState/v1.<kid>`.
//! - Plaintext: compact JSON `{"m":method,"d":params digest,"p":principal digest?,
//!   "x":expiry (Unix seconds),"s":handler state}`. The params digest is SHA-256 over the
//!   method, the tool/prompt name or resource URI and the canonical JSON of the arguments
//!   (`inputResponses` and `requestState` excluded), truncated to 128 bits; the principal
//!   digest likewise over the caller's issuer, subject and client id.
//! - Limits: at most [`MAX_STATE_BYTES`] of plaintext when sealing (a bigger state is a
//!   handler bug, answered `-32603`), and at most [`MAX_TOKEN_BYTES`] of token when opening
//!   (longer is refused before any decoding).
//!
//! Opening checks, in order: shape, key id known, authentication tag, method, params digest,
//! principal, expiry. Every failure is `-32602` naming the reason.

mod binding;
mod keys;
mod sealed;
mod state;

use std::time::Duration;

pub(crate) use binding::{Binding, PendingArguments, PendingBinding, digest16};
pub use keys::{StateKeys, StateKeysError};
pub(crate) use sealed::Purpose;
#[cfg(feature = "fuzzing")]
pub(crate) use sealed::Refused;
pub(crate) use state::{SingleUse, reason_label, replayed};

/// The most handler state (serialized JSON plus the binding, in bytes) one token may carry.
pub(crate) const MAX_STATE_BYTES: usize = 8 * 1024;
/// The longest `requestState` the server will try to open.
pub(crate) const MAX_TOKEN_BYTES: usize = 12 * 1024;
/// How long a sealed state stays valid unless configured otherwise.
pub(crate) const DEFAULT_STATE_TTL: Duration = Duration::from_secs(600);
