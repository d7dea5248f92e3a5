//! The user guide's pages (`docs/*.md`) as doc tests: every Rust snippet in them compiles
//! (and runs, unless marked `no_run`) under `cargo test --doc`. Built only for doc tests.

/// docs/README.md
#[doc = include_str!("../docs/README.md")]
pub struct Index;

/// docs/writing-a-server.md
#[doc = include_str!("../docs/writing-a-server.md")]
pub struct WritingAServer;

/// docs/state.md
#[doc = include_str!("../docs/state.md")]
pub struct State;

/// docs/errors.md
#[doc = include_str!("../docs/errors.md")]
pub struct Errors;

/// docs/testing.md
#[doc = include_str!("../docs/testing.md")]
pub struct Testing;

/// docs/multi-round-trip.md
#[doc = include_str!("../docs/multi-round-trip.md")]
pub struct MultiRoundTrip;

/// docs/notifications.md
#[doc = include_str!("../docs/notifications.md")]
pub struct Notifications;

/// docs/runtime-tools.md
#[doc = include_str!("../docs/runtime-tools.md")]
pub struct RuntimeTools;

/// docs/legacy-clients.md
#[doc = include_str!("../docs/legacy-clients.md")]
pub struct LegacyClients;

/// docs/stdio.md
#[doc = include_str!("../docs/stdio.md")]
pub struct Stdio;

/// docs/idempotency.md
#[doc = include_str!("../docs/idempotency.md")]
pub struct Idempotency;

/// docs/tasks.md
#[doc = include_str!("../docs/tasks.md")]
pub struct Tasks;

/// docs/skills.md
#[doc = include_str!("../docs/skills.md")]
pub struct Skills;

/// docs/auth.md
#[cfg(feature = "auth")]
#[doc = include_str!("../docs/auth.md")]
pub struct Auth;

/// docs/deploying.md
#[cfg(feature = "prometheus")]
#[doc = include_str!("../docs/deploying.md")]
pub struct Deploying;

/// docs/scaling-out.md
#[cfg(feature = "redis")]
#[doc = include_str!("../docs/scaling-out.md")]
pub struct ScalingOut;

/// docs/mounting.md
#[doc = include_str!("../docs/mounting.md")]
pub struct Mounting;
