//! The mirrored-header decoder (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-*`, `=?base64?…?=`): any header list is read without a panic, and any string
//! survives the base64 form unchanged.
#![no_main]

use stateless_mcp_fuzz::HeaderInput;

libfuzzer_sys::fuzz_target!(|input: (Vec<HeaderInput>, &str)| {
    let (headers, text) = input;
    let headers: Vec<(Vec<u8>, Vec<u8>)> =
        headers.into_iter().map(HeaderInput::into_pair).collect();
    stateless_mcp::fuzzing::mirrored_headers(&headers, text);
});
