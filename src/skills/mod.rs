//! The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): skills a server
//! publishes beside its tools, each a `SKILL.md` (YAML front matter naming and describing
//! it, then instructions) and the files it refers to.
//!
//! Register them on the builder ([`ServerBuilder::skill`](crate::ServerBuilder::skill),
//! from values with [`SkillDef`] or from disk with [`SkillDef::from_dir`] and
//! [`from_dir`]) or change them at runtime
//! ([`CatalogChange::add_skill`](crate::catalog::CatalogChange::add_skill)). A server with
//! skills advertises the extension (in `server/discover`, and in `initialize` to 2025-11-25
//! clients) and the `resources` capability, and answers, in both eras:
//!
//! - `skills/list`: every skill's entry (its `SKILL.md` URI, its front matter verbatim, and
//!   every file with its SHA-256 digest and size), paginated like the other lists;
//! - `skills/get`: one entry by its `SKILL.md` URI (`-32602` for a URI that names none);
//! - `resources/read` of each file at `skill://<prefix/><name>/<path>`: the files are fixed
//!   resources, listed by `resources/list`.
//!
//! A runtime change that adds, replaces or removes a skill changes the resource list too:
//! listen streams (and legacy GET streams) that follow it hear
//! `notifications/resources/list_changed`, and [`Applied::announce`](crate::catalog::Applied::announce)
//! tells the other replicas through the bus, as for tools.

mod def;
mod dir;
mod frontmatter;

pub use def::SkillDef;
pub use dir::from_dir;
