//! Pagination cursors: any text resumes within the list or is refused; encoding a valid
//! offset round-trips.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: (&str, u16, u16)| {
    let (text, offset, len) = input;
    stateless_mcp::fuzzing::cursor(text, usize::from(offset), usize::from(len));
});
