//! Skills read from disk: one directory holding a `SKILL.md` and its files
//! ([`SkillDef::from_dir`]), or a directory of such directories ([`from_dir`]).

use std::path::{Path, PathBuf};

use super::def::{MANIFEST, SkillDef};
use crate::Error;

fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::invalid_definition(format!("skill directory {}: {e}", path.display()))
}

/// Every file under `dir`, as paths relative to `root` with `/` separators, sorted (so
/// every replica lists a skill's files in the same order).
fn files_under(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<(), Error> {
    for entry in std::fs::read_dir(dir).map_err(|e| io_error(dir, e))? {
        let path = entry.map_err(|e| io_error(dir, e))?.path();
        let meta = std::fs::metadata(&path).map_err(|e| io_error(&path, e))?;
        if meta.is_dir() {
            files_under(root, &path, out)?;
        } else if meta.is_file() {
            let relative = path.strip_prefix(root).unwrap_or(&path);
            let parts: Option<Vec<&str>> = relative.iter().map(|p| p.to_str()).collect();
            let parts = parts.ok_or_else(|| {
                Error::invalid_definition(format!(
                    "skill file {}: its name is not UTF-8",
                    path.display()
                ))
            })?;
            out.push((parts.join("/"), path));
        }
    }
    Ok(())
}

impl SkillDef {
    /// The skill in directory `dir`: its `SKILL.md`, and every other file below it
    /// (subdirectories included) attached by its path relative to `dir`.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<SkillDef, Error> {
        let dir = dir.as_ref();
        let manifest = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&manifest).map_err(|e| io_error(&manifest, e))?;
        let mut files = Vec::new();
        files_under(dir, dir, &mut files)?;
        files.sort();
        let named = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let mut def = SkillDef::new(text).directory_name(named);
        for (path, on_disk) in files {
            if path == MANIFEST {
                continue;
            }
            let bytes = std::fs::read(&on_disk).map_err(|e| io_error(&on_disk, e))?;
            def = def.file(path, bytes);
        }
        Ok(def)
    }
}

/// The skills in the directories directly under `dir` that hold a `SKILL.md` (sorted by
/// directory name), each read with [`SkillDef::from_dir`]. A directory named otherwise than
/// its skill is refused when the skill is built (the extension wants the skill's last path
/// segment to be its name).
pub fn from_dir(dir: impl AsRef<Path>) -> Result<Vec<SkillDef>, Error> {
    let dir = dir.as_ref();
    let mut skill_dirs = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| io_error(dir, e))? {
        let path = entry.map_err(|e| io_error(dir, e))?.path();
        if path.join(MANIFEST).is_file() {
            skill_dirs.push(path);
        }
    }
    skill_dirs.sort();
    skill_dirs.iter().map(SkillDef::from_dir).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_skills_with_their_files() {
        let root = std::env::temp_dir().join(format!("skills-dir-{}", std::process::id()));
        let skill = root.join("pdf-tools");
        std::fs::create_dir_all(skill.join("references/deep")).unwrap();
        std::fs::create_dir_all(root.join("not-a-skill")).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: pdf-tools\ndescription: PDFs\n---\nbody\n",
        )
        .unwrap();
        std::fs::write(skill.join("references/FORMS.md"), "forms").unwrap();
        std::fs::write(skill.join("references/deep/x.bin"), [0xff, 0]).unwrap();
        let defs = from_dir(&root).unwrap();
        assert_eq!(defs.len(), 1);
        let c = defs.into_iter().next().unwrap().compile().unwrap();
        let uris: Vec<&str> = c.entry.resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "skill://pdf-tools/SKILL.md",
                "skill://pdf-tools/references/FORMS.md",
                "skill://pdf-tools/references/deep/x.bin"
            ]
        );
        // A directory named otherwise than its skill is refused.
        std::fs::rename(&skill, root.join("other")).unwrap();
        let defs = from_dir(&root).unwrap();
        assert!(defs.into_iter().next().unwrap().compile().is_err());
        std::fs::remove_dir_all(&root).unwrap();
        assert!(from_dir(&root).is_err());
    }
}
