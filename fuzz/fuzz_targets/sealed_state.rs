//! Sealed `requestState`: a fuzzed token never opens, a sealed payload opens to itself, a
//! token with one byte changed never opens.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: (&str, &[u8], usize)| {
    let (token, payload, flip) = input;
    stateless_mcp::fuzzing::sealed_state(token, payload, flip);
});
