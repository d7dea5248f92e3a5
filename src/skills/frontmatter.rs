//! The front matter of a `SKILL.md`: the YAML mapping between its first two `---` lines,
//! read as JSON (a skill entry carries it verbatim, and hosts compare it field by field with
//! what they parse from the file).

use serde_json::Value;

use crate::protocol::JsonObject;

/// The front matter of `markdown` as a JSON object, or why it has none a skill may carry:
/// the file must begin with a `---` line (after an optional byte order mark; CRLF line ends
/// are read as LF), the mapping ends at the next `---` line, and it needs string `name` and
/// `description` fields.
pub(super) fn parse(markdown: &str) -> Result<JsonObject, String> {
    let text = markdown.strip_prefix('\u{feff}').unwrap_or(markdown);
    let text = text.replace("\r\n", "\n");
    let rest = text
        .strip_prefix("---\n")
        .ok_or("SKILL.md must begin with a \"---\" line")?;
    let mut yaml_len = None;
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches('\n').trim_end_matches([' ', '\t']) == "---" {
            yaml_len = Some(at);
            break;
        }
        at += line.len();
    }
    let yaml = &rest[..yaml_len.ok_or("the front matter has no closing \"---\" line")?];
    let value: Value =
        serde_norway::from_str(yaml).map_err(|e| format!("the front matter is not YAML: {e}"))?;
    let Value::Object(map) = value else {
        return Err("the front matter must be a mapping of keys to values".into());
    };
    for field in ["name", "description"] {
        match map.get(field) {
            Some(Value::String(s)) if !s.is_empty() => {}
            _ => {
                return Err(format!(
                    "the front matter needs a non-empty string {field:?}"
                ));
            }
        }
    }
    Ok(map)
}

/// Whether `name` follows the Agent Skills naming rule: 1 to 64 lowercase letters, digits
/// and single hyphens, neither first nor last.
pub(super) fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_mapping_between_the_markers() {
        let md = "\u{feff}---\r\nname: pdf-tools\r\ndescription: Fill PDF forms\r\nmetadata:\r\n  version: \"2\"\r\nlicense: MIT\r\n---\r\n# Body\r\n---\r\n";
        let fm = parse(md).unwrap();
        assert_eq!(
            Value::Object(fm),
            json!({"name": "pdf-tools", "description": "Fill PDF forms",
                "metadata": {"version": "2"}, "license": "MIT"})
        );
        let fm = parse("---\nname: a\ndescription: b\nn: 3\nok: true\n---   \nbody").unwrap();
        assert_eq!(fm["n"], 3);
        assert_eq!(fm["ok"], true);
    }

    #[test]
    fn refuses_what_is_no_skill() {
        for (md, why) in [
            ("# no front matter", "begin"),
            ("---\nname: a\ndescription: b\n", "closing"),
            ("---\n- a\n- b\n---\n", "mapping"),
            ("---\nname: a\n---\n", "description"),
            ("---\nname: 7\ndescription: b\n---\n", "name"),
            ("---\nname: [a\ndescription: b\n---\n", "YAML"),
        ] {
            let e = parse(md).unwrap_err();
            assert!(e.contains(why), "{md:?}: {e}");
        }
    }

    #[test]
    fn names() {
        for ok in ["a", "pdf-tools", "x1-2y", &"a".repeat(64)] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a b", &"a".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
