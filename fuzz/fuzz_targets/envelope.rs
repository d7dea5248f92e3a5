//! The request envelope and params read: the one-pass read and the step-by-step read of any
//! body agree (params, `_meta`, id, error code), and neither panics.
#![no_main]

libfuzzer_sys::fuzz_target!(|body: &[u8]| stateless_mcp::fuzzing::envelope(body));
