//! The whole `Server::handle` (demo and conformance fixtures), fed structured requests:
//! exactly one schema-valid answer with the request's id, or none for a notification, and
//! never a panic. A second round may retry the first with the `requestState` it was given.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: stateless_mcp_fuzz::Exchange| input.run());
