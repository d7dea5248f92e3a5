//! The RFC 6570 URI-template matcher: any template compiles or is refused, any URI matches
//! or not, without a panic; a template without expressions matches exactly itself.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: (&str, &str)| {
    let (template, uri) = input;
    stateless_mcp::fuzzing::uri_template(template, uri);
});
