//! The checks that the values a transport mirrors from the body into its own headers agree
//! with the body (`-32020` HeaderMismatch).
//!
//! The transport extracts and decodes header values (`crate::mirrored`, on HTTP:
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`); the comparison with the
//! body lives here because only the dispatcher knows the body and the tools' `x-mcp-header`
//! parameters.

use serde_json::Value;

use crate::handler::header_rules::{HeaderParam, ParamKind};
pub use crate::mirrored::{Mirrored, MirroredHeaders};
use crate::protocol::ErrorObject;

fn get<'a>(m: &'a Mirrored, header: &str) -> Result<Option<&'a str>, ErrorObject> {
    match m {
        Mirrored::Absent => Ok(None),
        Mirrored::Value(v) => Ok(Some(v)),
        Mirrored::Invalid(why) => Err(ErrorObject::header_mismatch(format!(
            "Invalid {header} header: {why}"
        ))),
    }
}

fn required<'a>(m: &'a Mirrored, header: &str) -> Result<&'a str, ErrorObject> {
    get(m, header)?
        .ok_or_else(|| ErrorObject::header_mismatch(format!("Missing required {header} header")))
}

impl MirroredHeaders<'_> {
    /// `MCP-Protocol-Version` is present and equals the body's protocol version.
    pub(crate) fn check_protocol_version(&self, body: &str) -> Result<(), ErrorObject> {
        let h = required(&self.protocol_version, "MCP-Protocol-Version")?;
        if h != body {
            return Err(ErrorObject::header_mismatch(format!(
                "MCP-Protocol-Version header {h:?} does not match _meta protocolVersion {body:?}"
            )));
        }
        Ok(())
    }

    /// `Mcp-Method` is present and equals the body's method (case-sensitive).
    pub(crate) fn check_method(&self, body: &str) -> Result<(), ErrorObject> {
        let h = required(&self.method, "Mcp-Method")?;
        if h != body {
            return Err(ErrorObject::header_mismatch(format!(
                "Mcp-Method header {h:?} does not match method {body:?}"
            )));
        }
        Ok(())
    }

    /// `Mcp-Name` is present and, when the body names something, equals it.
    pub(crate) fn check_name(&self, body: Option<&str>) -> Result<(), ErrorObject> {
        let h = required(&self.name, "Mcp-Name")?;
        match body {
            Some(b) if b != h => Err(ErrorObject::header_mismatch(format!(
                "Mcp-Name header {h:?} does not match the request's {b:?}"
            ))),
            _ => Ok(()),
        }
    }

    /// Each of the tool's `x-mcp-header` parameters agrees with the arguments.
    pub(crate) fn check_params(
        &self,
        params: &[HeaderParam],
        arguments: &Value,
    ) -> Result<(), ErrorObject> {
        for p in params {
            let header = format!("Mcp-Param-{}", p.name);
            let sent = match self.params.iter().find(|(n, _)| *n == p.lower) {
                Some((_, m)) => get(m, &header)?,
                None => None,
            };
            let body = p.argument(arguments);
            match (body, sent) {
                (None, None) => {}
                (Some(_), None) => {
                    return Err(ErrorObject::header_mismatch(format!(
                        "Missing required {header} header"
                    )));
                }
                (None, Some(_)) => {
                    return Err(ErrorObject::header_mismatch(format!(
                        "{header} header sent but the argument is absent"
                    )));
                }
                (Some(b), Some(h)) => {
                    if !same_value(p.kind, b, h) {
                        return Err(ErrorObject::header_mismatch(format!(
                            "{header} header {h:?} does not match the argument {b}"
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}

fn same_value(kind: ParamKind, body: &Value, header: &str) -> bool {
    match (kind, body) {
        (ParamKind::String, Value::String(s)) => s == header,
        (ParamKind::Boolean, Value::Bool(b)) => header == if *b { "true" } else { "false" },
        (ParamKind::Integer, Value::Number(n)) => match (header.parse::<f64>(), n.as_f64()) {
            (Ok(h), Some(b)) => h == b,
            _ => false,
        },
        // The argument has the wrong type: argument validation rejects it with a message
        // about the type, which helps the caller more than a header mismatch would.
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn param(name: &str, path: &[&str], kind: ParamKind) -> HeaderParam {
        HeaderParam {
            name: name.into(),
            lower: name.to_ascii_lowercase(),
            path: path.iter().map(|s| s.to_string()).collect(),
            kind,
        }
    }

    #[test]
    fn params_compare_by_type() {
        let p = [
            param("Region", &["region"], ParamKind::String),
            param("N", &["n"], ParamKind::Integer),
        ];
        let mut h = MirroredHeaders::default();
        h.params
            .push(("region".into(), Mirrored::Value("eu".into())));
        h.params.push(("n".into(), Mirrored::Value("42.0".into())));
        assert!(h.check_params(&p, &json!({"region":"eu","n":42})).is_ok());
        assert!(h.check_params(&p, &json!({"region":"us","n":42})).is_err());
        assert!(h.check_params(&p, &json!({"region":"eu","n":43})).is_err());
        assert!(
            h.check_params(&p, &json!({"n":42})).is_err(),
            "header without argument"
        );
        h.params.clear();
        assert!(
            h.check_params(&p, &json!({"region":null})).is_ok(),
            "null argument, no header"
        );
        assert_eq!(
            h.check_params(&p, &json!({"region":"eu"}))
                .unwrap_err()
                .code,
            -32020
        );
    }

    #[test]
    fn standard_headers() {
        let mut h = MirroredHeaders::default();
        assert!(h.check_method("tools/list").is_err());
        h.method = Mirrored::Value("TOOLS/LIST".into());
        assert!(
            h.check_method("tools/list").is_err(),
            "values are case-sensitive"
        );
        h.method = Mirrored::Value("tools/list".into());
        assert!(h.check_method("tools/list").is_ok());
        h.name = Mirrored::Invalid("repeated".into());
        assert!(h.check_name(Some("x")).is_err());
    }
}
