//! What a server advertises ([`Advertised`]): the kinds of list it serves and whether it
//! runs tasks, fixed when the server is built. The catalog keeps it; listen streams (both
//! eras) read it to know which changes they can announce.

/// The capabilities `server/discover` advertises, fixed when the server is built: a change
/// may empty a list, never add a kind of list the server did not advertise.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Advertised {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
    pub(crate) tasks: bool,
    /// The Skills extension (`skills/list`, `skills/get`).
    pub(crate) skills: bool,
}
