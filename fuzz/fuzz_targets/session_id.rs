//! Legacy (2025-11-25) session ids: a fuzzed id never opens, an issued one opens to its
//! version, one changed byte never opens, and session ids and `requestState` tokens never
//! open as each other (one key ring seals both).
#![no_main]

libfuzzer_sys::fuzz_target!(|input: (&str, &str, usize)| {
    let (token, version, flip) = input;
    stateless_mcp::fuzzing::session_id(token, version, flip);
});
