//! Sealing and opening: a payload encrypted and authenticated with the ring's newest key
//! into a `v1.<kid>.<base64url(nonce ‖ ciphertext ‖ tag)>` token, and opened with whichever
//! key its id names, for one [`Purpose`].
//!
//! The purpose's tag is part of the associated data (`stateless-mcp/<tag>/v1.<kid>`), so a
//! token sealed for one purpose fails authentication (`tampered`) when opened for another:
//! a legacy session token or a task handle can never be passed off as a `requestState`,
//! nor the other way round, even though one key ring seals them all.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, AeadCore, OsRng, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

use super::keys::{StateKeys, valid_kid};
use crate::Error;

/// The token format version (the first dot-separated part).
const VERSION: &str = "v1";
const NONCE_LEN: usize = 24;
const TAG_LEN: usize = 16;

/// What a token is for: its tag goes into the associated data, and the longest token of
/// this purpose the server will try to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Purpose {
    tag: &'static str,
    max_token_bytes: usize,
}

impl Purpose {
    /// `requestState`: handler state between the rounds of a multi-round-trip request.
    pub(crate) const REQUEST_STATE: Purpose = Purpose {
        tag: "requestState",
        max_token_bytes: super::MAX_TOKEN_BYTES,
    };

    /// A legacy (2025-11-25) session id, `Mcp-Session-Id` (see `server::legacy::session`).
    pub(crate) const LEGACY_SESSION: Purpose = Purpose {
        tag: "legacySession",
        max_token_bytes: 8 * 1024,
    };

    /// A DPoP server nonce (`auth::dpop`): the number of a time window.
    #[cfg(feature = "auth")]
    pub(crate) const DPOP_NONCE: Purpose = Purpose {
        tag: "dpopNonce",
        max_token_bytes: 256,
    };

    fn aad(self, kid: &str) -> Vec<u8> {
        format!("stateless-mcp/{}/{VERSION}.{kid}", self.tag).into_bytes()
    }
}

/// Why a token did not open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Longer than the purpose allows (not decoded at all).
    TooLarge,
    /// Not of the token shape.
    Malformed,
    /// Sealed with a key id this ring does not hold.
    UnknownKey(String),
    /// Authentication failed: altered, not ours, or sealed for another purpose.
    Tampered,
}

impl StateKeys {
    /// Seals `plain` for `purpose` with the newest key.
    pub(crate) fn seal_bytes(&self, purpose: Purpose, plain: &[u8]) -> Result<String, Error> {
        let key = &self.keys[0];
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let aad = purpose.aad(&key.id);
        let sealed = key
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: plain,
                    aad: &aad,
                },
            )
            .map_err(|_| Error::internal(format!("{} could not be sealed", purpose.tag)))?;
        let mut blob = Vec::with_capacity(NONCE_LEN + sealed.len());
        blob.extend_from_slice(&nonce);
        blob.extend_from_slice(&sealed);
        Ok(format!(
            "{VERSION}.{}.{}",
            key.id,
            URL_SAFE_NO_PAD.encode(blob)
        ))
    }

    /// Opens a token sealed for `purpose`, returning its plaintext. Checks, in order: length,
    /// shape, key id known, authentication tag.
    pub(crate) fn open_bytes(&self, purpose: Purpose, token: &str) -> Result<Vec<u8>, Refused> {
        if token.len() > purpose.max_token_bytes {
            return Err(Refused::TooLarge);
        }
        let mut parts = token.splitn(3, '.');
        let (Some(VERSION), Some(kid), Some(body)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(Refused::Malformed);
        };
        let blob = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| Refused::Malformed)?;
        if blob.len() < NONCE_LEN + TAG_LEN || !valid_kid(kid) {
            return Err(Refused::Malformed);
        }
        let key = self
            .keys
            .iter()
            .find(|k| k.id == kid)
            .ok_or_else(|| Refused::UnknownKey(kid.to_owned()))?;
        let (nonce, sealed) = blob.split_at(NONCE_LEN);
        let aad = purpose.aad(kid);
        key.cipher
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: &aad,
                },
            )
            .map_err(|_| Refused::Tampered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K1: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

    #[test]
    fn request_state_keeps_its_associated_data() {
        // Tokens issued before purposes existed still open: the AAD is unchanged.
        assert_eq!(
            Purpose::REQUEST_STATE.aad("k1"),
            b"stateless-mcp/requestState/v1.k1"
        );
    }

    #[test]
    fn a_token_of_one_purpose_never_opens_as_another() {
        let keys: StateKeys = K1.parse().unwrap();
        let session = Purpose {
            tag: "legacySession",
            max_token_bytes: 4096,
        };
        let token = keys.seal_bytes(session, b"{}").unwrap();
        assert_eq!(keys.open_bytes(session, &token).unwrap(), b"{}");
        assert_eq!(
            keys.open_bytes(Purpose::REQUEST_STATE, &token),
            Err(Refused::Tampered)
        );
        let state = keys.seal_bytes(Purpose::REQUEST_STATE, b"1").unwrap();
        assert_eq!(keys.open_bytes(session, &state), Err(Refused::Tampered));
        assert_eq!(
            keys.open_bytes(session, &"x".repeat(4097)),
            Err(Refused::TooLarge)
        );
    }
}
