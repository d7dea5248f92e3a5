//! The key ring ([`StateKeys`]): its keys and ids, generating one, and parsing the
//! `KID:BASE64KEY,…` form every replica is configured with.

use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE, URL_SAFE_NO_PAD};
use chacha20poly1305::aead::{KeyInit, OsRng};
use chacha20poly1305::{Key, XChaCha20Poly1305};

/// The length of a key, in bytes.
const KEY_LEN: usize = 32;
/// The longest key id.
pub(super) const MAX_KID_LEN: usize = 16;

/// One sealing key with its id.
#[derive(Clone)]
pub(super) struct StateKey {
    pub(super) id: String,
    pub(super) cipher: XChaCha20Poly1305,
}

/// The key ring that seals and opens `requestState`: the first key seals, every key opens.
///
/// Every replica must hold the same ring. Parse one from the `KID:BASE64KEY,…` form (newest
/// first, 32-byte keys in standard or URL-safe base64):
///
/// ```
/// use stateless_mcp::settings::StateKeys;
///
/// let keys: StateKeys = "k2:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=,\
///                        k1:HxscGRoYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgEAAAA="
///     .parse()
///     .unwrap();
/// assert_eq!(keys.ids().collect::<Vec<_>>(), ["k2", "k1"]);
/// ```
#[derive(Clone)]
pub struct StateKeys {
    pub(super) keys: Vec<StateKey>,
    generated: bool,
}

impl fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateKeys")
            .field("ids", &self.ids().collect::<Vec<_>>())
            .field("generated", &self.generated)
            .finish()
    }
}

/// Why a key ring could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateKeysError(String);

impl fmt::Display for StateKeysError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StateKeysError {}

pub(super) fn valid_kid(kid: &str) -> bool {
    !kid.is_empty()
        && kid.len() <= MAX_KID_LEN
        && kid
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl StateKeys {
    /// A ring of one random key, for a single process. Tokens it seals cannot be opened by
    /// any other process: several replicas need a shared ring.
    pub fn generate() -> Self {
        let key = XChaCha20Poly1305::generate_key(&mut OsRng);
        StateKeys {
            keys: vec![StateKey {
                id: "local".into(),
                cipher: XChaCha20Poly1305::new(&key),
            }],
            generated: true,
        }
    }

    /// A ring from `(id, 32-byte key)` pairs, newest first.
    pub fn from_keys<I, K>(keys: I) -> Result<Self, StateKeysError>
    where
        I: IntoIterator<Item = (K, [u8; KEY_LEN])>,
        K: Into<String>,
    {
        let mut ring = Vec::new();
        for (id, bytes) in keys {
            let id = id.into();
            if !valid_kid(&id) {
                return Err(StateKeysError(format!(
                    "state key id {id:?} must be 1-{MAX_KID_LEN} characters of A-Z a-z 0-9 _ -"
                )));
            }
            if ring.iter().any(|k: &StateKey| k.id == id) {
                return Err(StateKeysError(format!("state key id {id:?} appears twice")));
            }
            ring.push(StateKey {
                id,
                cipher: XChaCha20Poly1305::new(Key::from_slice(&bytes)),
            });
        }
        if ring.is_empty() {
            return Err(StateKeysError("the state key list is empty".into()));
        }
        Ok(StateKeys {
            keys: ring,
            generated: false,
        })
    }

    /// The key ids, newest (the sealing key) first.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(|k| k.id.as_str())
    }

    /// Whether this ring was generated in-process (not shared with other replicas).
    pub fn is_generated(&self) -> bool {
        self.generated
    }
}

impl FromStr for StateKeys {
    type Err = StateKeysError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut pairs = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (id, b64) = item.split_once(':').ok_or_else(|| {
                StateKeysError(format!(
                    "state key {:?} is not KID:BASE64KEY",
                    item.chars().take(MAX_KID_LEN).collect::<String>()
                ))
            })?;
            let bytes = [STANDARD, URL_SAFE]
                .iter()
                .find_map(|e| e.decode(b64.trim()).ok())
                .or_else(|| URL_SAFE_NO_PAD.decode(b64.trim()).ok())
                .ok_or_else(|| StateKeysError(format!("state key {id:?} is not valid base64")))?;
            let key: [u8; KEY_LEN] = bytes.try_into().map_err(|b: Vec<u8>| {
                StateKeysError(format!(
                    "state key {id:?} has {} bytes; it must have {KEY_LEN}",
                    b.len()
                ))
            })?;
            pairs.push((id.to_owned(), key));
        }
        StateKeys::from_keys(pairs)
    }
}
