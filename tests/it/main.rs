//! The one integration-test binary. Submodules are named by behaviour; `support` starts the
//! app on `127.0.0.1:0` and checks every emitted message against the official schema.

mod support;

mod basics;
mod conformance;
mod interop_python;
