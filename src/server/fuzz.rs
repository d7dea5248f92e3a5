//! The invariants of the server's decoders, for the fuzz targets (feature `fuzzing` only;
//! reached through [`crate::fuzzing`]). Each function panics when its invariant breaks.
//!

use super::cursor;
use super::envelope::{self, Params};
use super::seal::{Purpose, Refused, StateKeys};

/// The params of a message as both reads see them: `Ok((name, protocolVersion))` or the
/// error code.
fn view(params: Result<Params<'_>, i32>) -> Result<(Option<String>, String), i32> {
    let (view, meta) = params?.read().map_err(|e| e.code)?;
    Ok((
        view.name.map(|n| n.get().to_owned()),
        meta.protocol_version().to_owned(),
    ))
}

/// The one-pass read and the step-by-step read of `body` agree: on the params they find,
/// and on the error code when they fail.
pub(crate) fn both_reads_agree(body: &[u8]) {
    let one_pass = envelope::read(body).map_err(|e| e.code);
    let stepwise = envelope::parse_message(body).map_err(|e| e.code);
    let ids = (
        one_pass
            .as_ref()
            .map(|m| format!("{:?}", m.id.echo()))
            .map_err(|&e| e),
        stepwise
            .as_ref()
            .map(|m| format!("{:?}", m.id.echo()))
            .map_err(|&e| e),
    );
    assert_eq!(
        ids.0.is_ok(),
        ids.1.is_ok(),
        "one read failed and the other did not: {:?}",
        String::from_utf8_lossy(body)
    );
    let one = view(one_pass.map(|m| m.params));
    let step = view(stepwise.map(|m| Params::Raw(m.params)));
    assert_eq!(
        one,
        step,
        "the reads disagree on {:?}",
        String::from_utf8_lossy(body)
    );
    if let (Ok(a), Ok(b)) = ids {
        assert_eq!(a, b, "the reads disagree on the id");
    }
}

/// A cursor either is refused or resumes within the list; the cursor of a valid offset
/// resumes there.
pub(crate) fn cursor_round_trip(text: &str, offset: usize, len: usize) {
    let fp = cursor::fingerprint("tools", b"[]");
    if let Some(o) = cursor::decode(text, &fp, len) {
        assert!(o > 0 && o < len, "cursor {text:?} resumed at {o} of {len}");
    }
    let c = cursor::encode(&fp, offset);
    let expected = (offset > 0 && offset < len).then_some(offset);
    assert_eq!(cursor::decode(&c, &fp, len), expected, "{c}");
    assert_eq!(
        cursor::decode(&c, &cursor::fingerprint("prompts", b"[]"), len),
        None
    );
}

/// The fixed key ring of the fuzz targets.
pub(crate) fn keys() -> &'static StateKeys {
    static KEYS: std::sync::OnceLock<StateKeys> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=,k0:HxwdGhsZGBcWFRQTEhEQDw4NDAsKCQgHBgUEAwIBAAA="
            .parse()
            .expect("the fuzz key ring parses")
    })
}

/// An arbitrary token opens to nothing but a refusal (forging is not expected of a fuzzer:
/// if one opens, it must at least be within the limits), a sealed payload opens to itself,
/// and the same token with any one byte changed never opens.
pub(crate) fn sealed_round_trip(token: &str, payload: &[u8], flip: usize) {
    let purpose = Purpose::REQUEST_STATE;
    if let Ok(plain) = keys().open_bytes(purpose, token) {
        panic!("a fuzzed token opened: {token:?} -> {plain:?}");
    }
    let Ok(sealed) = keys().seal_bytes(purpose, payload) else {
        return;
    };
    assert_eq!(keys().open_bytes(purpose, &sealed).as_deref(), Ok(payload));
    let mut bytes = sealed.into_bytes();
    let i = flip % bytes.len();
    let replacement = if bytes[i] == b'A' { b'B' } else { b'A' };
    bytes[i] = replacement;
    let tampered = String::from_utf8(bytes).expect("tokens are ASCII");
    match keys().open_bytes(purpose, &tampered) {
        Ok(p) => panic!("a tampered token opened ({tampered}): {p:?}"),
        Err(Refused::TooLarge) => panic!("a token of the same length is too large"),
        Err(_) => {}
    }
}
