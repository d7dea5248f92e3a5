//! A skill as the builder and runtime changes take it ([`SkillDef`]: its `SKILL.md` and its
//! attached files), and what it compiles to: the entry `skills/list` and `skills/get`
//! carry, and one fixed resource per file.

use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use sha2::{Digest, Sha256};

use super::frontmatter;
use crate::Error;
use crate::handler::{HandlerError, RequestContext, ResourceDef, ResourceHandler, TemplateVars};
use crate::protocol::{ReadResourceResult, ResourceContents, Skill, SkillResource};

/// The URI scheme skills are served under.
pub(crate) const SCHEME: &str = "skill://";
/// The manifest every skill has at its root.
pub(crate) const MANIFEST: &str = "SKILL.md";
/// At most this many files per skill (`SKILL.md` included), as the extension fixes.
pub(crate) const MAX_FILES: usize = 512;
/// At most this many bytes over all of a skill's files, as the extension fixes.
pub(crate) const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// What a path segment keeps as it is in a URI; everything else is percent-encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A skill (Skills extension, `io.modelcontextprotocol/skills`): a `SKILL.md` whose YAML
/// front matter names and describes it, and the files attached to it (references,
/// scripts, templates), served as the resources `skill://<prefix/><name>/<path>`.
///
/// The front matter is read from the `SKILL.md` itself, so the entry hosts receive always
/// equals the file they read. Every problem (no front matter, a name outside the Agent
/// Skills rule, a bad path, a skill over the extension's limits of 512 files or 16 MiB) is an
/// error of [`ServerBuilder::build`](crate::ServerBuilder::build) or of the runtime change
/// that adds it.
///
/// ```
/// use stateless_mcp::Server;
/// use stateless_mcp::skills::SkillDef;
///
/// let skill = SkillDef::new("---\nname: release-notes\ndescription: Write release notes\n---\n\
///                            Read `references/STYLE.md`, then write the notes.\n")
///     .file("references/STYLE.md", "Short sentences. Past tense.\n");
/// let server = Server::builder().skill(skill).build().unwrap();
/// assert_eq!(
///     server.catalog().skill_uris(),
///     ["skill://release-notes/SKILL.md"]
/// );
/// ```
#[must_use]
#[derive(Clone)]
pub struct SkillDef {
    manifest: String,
    prefix: Option<String>,
    files: Vec<(String, Arc<[u8]>)>,
    /// The directory it was read from, whose name must be the skill's.
    directory: Option<String>,
}

impl fmt::Debug for SkillDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillDef")
            .field("prefix", &self.prefix)
            .field(
                "files",
                &self.files.iter().map(|f| &f.0).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl SkillDef {
    /// A skill whose `SKILL.md` is `skill_md`.
    pub fn new(skill_md: impl Into<String>) -> Self {
        SkillDef {
            manifest: skill_md.into(),
            prefix: None,
            files: Vec::new(),
            directory: None,
        }
    }

    /// Serves the skill under `prefix` (`/`-separated segments, e.g. `acme/billing`):
    /// `skill://acme/billing/<name>/SKILL.md`. Without one it is `skill://<name>/SKILL.md`.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Attaches the file at `path` (relative to the skill's root, `/`-separated, e.g.
    /// `references/FORMS.md`) with `contents`. Text that is UTF-8 is served as text, other
    /// bytes as a base64 blob; the MIME type follows the file's extension.
    pub fn file(mut self, path: impl Into<String>, contents: impl Into<Vec<u8>>) -> Self {
        self.files.push((path.into(), contents.into().into()));
        self
    }

    /// The skill read from a directory called `name`, which must be its name.
    pub(crate) fn directory_name(mut self, name: &str) -> Self {
        self.directory = Some(name.to_owned());
        self
    }

    /// The skill's entry and the resources that serve its files, checked.
    pub(crate) fn compile(self) -> Result<CompiledSkill, Error> {
        let refuse = |why: String| Err(Error::invalid_definition(format!("skill: {why}")));
        let frontmatter = match frontmatter::parse(&self.manifest) {
            Ok(f) => f,
            Err(why) => return refuse(why),
        };
        let name = frontmatter["name"].as_str().unwrap_or_default().to_owned();
        if !frontmatter::valid_name(&name) {
            return refuse(format!(
                "name {name:?} must be 1 to 64 lowercase letters, digits and single hyphens"
            ));
        }
        if let Some(dir) = self.directory.as_deref().filter(|d| *d != name) {
            return refuse(format!(
                "the directory {dir:?} holds the skill {name:?}: a skill's directory has its name"
            ));
        }
        let mut root = String::from(SCHEME);
        if let Some(prefix) = &self.prefix {
            for segment in prefix.split('/') {
                root.push_str(&encoded_segment(segment).map_err(|why| {
                    Error::invalid_definition(format!("skill {name:?}: prefix {prefix:?}: {why}"))
                })?);
                root.push('/');
            }
        }
        root.push_str(&name);
        let description = frontmatter["description"].as_str().map(str::to_owned);
        let mut files = vec![(
            MANIFEST.to_owned(),
            Arc::<[u8]>::from(self.manifest.into_bytes()),
        )];
        files.extend(self.files);
        if files.len() > MAX_FILES {
            return refuse(format!(
                "{name:?} has {} files; at most {MAX_FILES}",
                files.len()
            ));
        }
        let total: u64 = files.iter().map(|(_, c)| c.len() as u64).sum();
        if total > MAX_BYTES {
            return refuse(format!("{name:?} holds {total} bytes; at most {MAX_BYTES}"));
        }
        let mut entries = Vec::with_capacity(files.len());
        let mut resources = Vec::with_capacity(files.len());
        for (i, (path, contents)) in files.into_iter().enumerate() {
            let mut uri = root.clone();
            for segment in path.split('/') {
                let segment = encoded_segment(segment).map_err(|why| {
                    Error::invalid_definition(format!("skill {name:?}: file {path:?}: {why}"))
                })?;
                uri.push('/');
                uri.push_str(&segment);
            }
            if i > 0 && path == MANIFEST {
                return refuse(format!(
                    "{name:?}: SKILL.md is the skill's own, not an attachment"
                ));
            }
            let size = contents.len() as u64;
            entries.push(SkillResource {
                uri: uri.clone(),
                digest: format!("sha256:{:x}", Sha256::digest(&contents)),
                size,
            });
            let mime = mime_type(&path);
            let (resource_name, about) = if i == 0 {
                (name.clone(), description.clone())
            } else {
                (path.clone(), None)
            };
            let mut def = ResourceDef::new(uri.clone(), resource_name)
                .mime_type(mime)
                .size(size)
                .with_handler(FileReader {
                    mime,
                    contents: contents.clone(),
                });
            if let Some(about) = about {
                def = def.description(about);
            }
            resources.push(def);
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = entries.iter().find(|e| !seen.insert(e.uri.as_str())) {
            return refuse(format!("{name:?} lists {} twice", dup.uri));
        }
        Ok(CompiledSkill {
            entry: Skill {
                uri: entries[0].uri.clone(),
                frontmatter,
                resources: entries,
            },
            files: resources,
        })
    }
}

/// `segment` of a skill path, percent-encoded; refused when empty, `.`, `..` or holding NUL
/// or `\`.
fn encoded_segment(segment: &str) -> Result<String, &'static str> {
    if segment.is_empty() || segment == "." || segment == ".." {
        return Err("a path segment must not be empty, \".\" or \"..\"");
    }
    if segment.contains(['\0', '\\']) {
        return Err("a path segment must not hold NUL or a backslash");
    }
    Ok(utf8_percent_encode(segment, SEGMENT).to_string())
}

/// The MIME type of a skill file, by its extension.
fn mime_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt") => "text/plain",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("js" | "mjs") => "text/javascript",
        Some("ts") => "text/x-typescript",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("toml") => "application/toml",
        Some("html" | "htm") => "text/html",
        Some("csv") => "text/csv",
        Some("xml") => "application/xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// A compiled skill: its entry, and one resource per file (`SKILL.md` first).
pub(crate) struct CompiledSkill {
    pub(crate) entry: Skill,
    pub(crate) files: Vec<ResourceDef>,
}

/// Serves one file of a skill: its bytes as text when they are UTF-8, else as a blob.
struct FileReader {
    mime: &'static str,
    contents: Arc<[u8]>,
}

impl ResourceHandler for FileReader {
    fn read(
        &self,
        _ctx: RequestContext,
        uri: String,
        _vars: TemplateVars,
    ) -> BoxFuture<'static, Result<ReadResourceResult, HandlerError>> {
        let contents = match std::str::from_utf8(&self.contents) {
            Ok(text) => ResourceContents::text(uri, text),
            Err(_) => ResourceContents::blob(uri, &self.contents),
        };
        let result = ReadResourceResult::from(contents.with_mime_type(self.mime));
        Box::pin(async move { Ok(result) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MD: &str = "---\nname: pdf-tools\ndescription: Fill PDF forms\n---\n# Use it\n";

    #[test]
    fn an_entry_lists_every_file_with_its_digest_and_size() {
        let c = SkillDef::new(MD)
            .prefix("acme/docs")
            .file("references/FORMS & more.md", "forms\n")
            .compile()
            .unwrap();
        let e = &c.entry;
        assert_eq!(e.uri, "skill://acme/docs/pdf-tools/SKILL.md");
        assert_eq!(e.frontmatter["description"], "Fill PDF forms");
        assert_eq!(e.resources.len(), 2);
        assert_eq!(e.resources[0].uri, e.uri);
        assert_eq!(e.resources[0].size, MD.len() as u64);
        assert_eq!(
            e.resources[0].digest,
            format!("sha256:{:x}", Sha256::digest(MD.as_bytes()))
        );
        assert_eq!(
            e.resources[1].uri,
            "skill://acme/docs/pdf-tools/references/FORMS%20%26%20more.md"
        );
        assert_eq!(c.files.len(), 2);
        assert_eq!(
            c.files[0].resource.mime_type.as_deref(),
            Some("text/markdown")
        );
        assert_eq!(c.files[0].resource.name, "pdf-tools");
    }

    #[test]
    fn refuses_bad_skills() {
        let bad = [
            SkillDef::new("no front matter"),
            SkillDef::new("---\nname: Bad_Name\ndescription: x\n---\n"),
            SkillDef::new(MD).file("../escape.md", "x"),
            SkillDef::new(MD).file("a//b.md", "x"),
            SkillDef::new(MD).file("SKILL.md", "again"),
            SkillDef::new(MD).file("a.md", "x").file("a.md", "y"),
            SkillDef::new(MD).prefix("a/../b"),
            SkillDef::new(MD).file("big.bin", vec![0u8; (MAX_BYTES + 1) as usize]),
        ];
        for def in bad {
            let what = format!("{def:?}");
            assert!(def.compile().is_err(), "{what}");
        }
    }
}
