//! The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): a skill entry (its
//! `SKILL.md` URI, its front matter verbatim, every file with its digest and size), and the
//! results of `skills/list` and `skills/get`.

use serde::Serialize;

use super::JsonObject;
use super::result::{CachePolicy, ResultMeta, ResultType, StampResult};

/// The extension's identifier, the key of its capability in `extensions`.
pub(crate) const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";
/// `skills/list`: the skills a server serves, paginated.
pub(crate) const SKILLS_LIST: &str = "skills/list";
/// `skills/get`: one skill's entry, by the URI of its `SKILL.md`.
pub(crate) const SKILLS_GET: &str = "skills/get";

/// One file of a skill: its resource URI, and the SHA-256 digest (`sha256:` and 64
/// lowercase hex digits) and length of its raw bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct SkillResource {
    pub(crate) uri: String,
    pub(crate) digest: String,
    pub(crate) size: u64,
}

/// The entry of one skill, as `skills/list` and `skills/get` carry it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Skill {
    /// The resource URI of the skill's `SKILL.md`.
    pub(crate) uri: String,
    /// The `SKILL.md` front matter as a JSON object, verbatim (`name` and `description`
    /// always there).
    pub(crate) frontmatter: JsonObject,
    /// Every file of the skill, `SKILL.md` first.
    pub(crate) resources: Vec<SkillResource>,
}

/// The result of `skills/list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ListSkillsResult {
    #[serde(rename = "resultType")]
    result_type: ResultType,
    skills: Vec<Skill>,
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
    #[serde(flatten)]
    cache: CachePolicy,
    #[serde(rename = "_meta", skip_serializing_if = "ResultMeta::is_empty")]
    meta: ResultMeta,
}

impl ListSkillsResult {
    /// One page of the listing.
    pub(crate) fn new(skills: Vec<Skill>, next_cursor: Option<String>, cache: CachePolicy) -> Self {
        ListSkillsResult {
            result_type: ResultType::Complete,
            skills,
            next_cursor,
            cache,
            meta: ResultMeta::default(),
        }
    }
}

impl StampResult for ListSkillsResult {
    fn meta_mut(&mut self) -> &mut ResultMeta {
        &mut self.meta
    }
}

/// The result of `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct GetSkillResult<'a> {
    #[serde(rename = "resultType")]
    result_type: ResultType,
    skill: &'a Skill,
    #[serde(flatten)]
    cache: CachePolicy,
    #[serde(rename = "_meta", skip_serializing_if = "ResultMeta::is_empty")]
    meta: ResultMeta,
}

impl<'a> GetSkillResult<'a> {
    /// The result carrying `skill`.
    pub(crate) fn new(skill: &'a Skill, cache: CachePolicy) -> Self {
        GetSkillResult {
            result_type: ResultType::Complete,
            skill,
            cache,
            meta: ResultMeta::default(),
        }
    }
}

impl StampResult for GetSkillResult<'_> {
    fn meta_mut(&mut self) -> &mut ResultMeta {
        &mut self.meta
    }
}
