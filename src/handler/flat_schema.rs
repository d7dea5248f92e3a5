//! Input schemas simple enough to check on the arguments' JSON text: an object whose
//! properties are strings, numbers, integers, booleans or nulls (what schemars generates for
//! a struct of such fields). A typed tool with such a schema reads its arguments straight
//! from the request body into its type, without building a `serde_json::Value` for the
//! JSON Schema validator first.
//!
//! [`FlatSchema::accepts`] is sound, not complete: `true` only for arguments the tool's
//! compiled validator accepts too and that read as a `Value` (same nesting limit, same
//! numbers); `false` also for what it does not decide (a key sent twice, a fraction where an
//! integer is asked, a bound it cannot compare exactly), and the caller then takes the
//! `Value` path, which reports exactly what it always did.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::protocol::JsonObject;
use crate::protocol::strict::Str;

/// The dialect whose `format` is an annotation only (the validator's default draft).
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Keywords that never make an instance invalid.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "$comment",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const INTEGER: u8 = 4;
const NUMBER: u8 = 8;
const STRING: u8 = 16;

/// A compiled flat object schema (see the module docs).
#[derive(Debug)]
pub(crate) struct FlatSchema {
    properties: Vec<(String, Property)>,
    /// Bit `i`: property `i` is required.
    required: u64,
    /// Whether keys other than the properties are allowed.
    additional: bool,
}

#[derive(Debug, Default)]
struct Property {
    /// The `type` bits.
    types: u8,
    minimum: Option<i128>,
    maximum: Option<i128>,
    exclusive_minimum: Option<i128>,
    exclusive_maximum: Option<i128>,
}

/// An integer bound, when it is one.
fn bound(v: &Value) -> Option<i128> {
    let n = v.as_number()?;
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

fn type_bit(name: &str) -> Option<u8> {
    Some(match name {
        "null" => NULL,
        "boolean" => BOOLEAN,
        "integer" => INTEGER,
        "number" => NUMBER,
        "string" => STRING,
        _ => return None,
    })
}

impl Property {
    fn compile(schema: &Value) -> Option<Property> {
        let mut p = Property::default();
        for (key, value) in schema.as_object()? {
            match key.as_str() {
                "type" => {
                    p.types = match value {
                        Value::String(t) => type_bit(t)?,
                        Value::Array(ts) if !ts.is_empty() => {
                            let mut bits = 0;
                            for t in ts {
                                bits |= type_bit(t.as_str()?)?;
                            }
                            bits
                        }
                        _ => return None,
                    }
                }
                // An annotation in the 2020-12 dialect, which `FlatSchema::compile` requires.
                "format" => {
                    value.as_str()?;
                }
                "minimum" => p.minimum = Some(bound(value)?),
                "maximum" => p.maximum = Some(bound(value)?),
                "exclusiveMinimum" => p.exclusive_minimum = Some(bound(value)?),
                "exclusiveMaximum" => p.exclusive_maximum = Some(bound(value)?),
                k if ANNOTATIONS.contains(&k) => {}
                _ => return None,
            }
        }
        (p.types != 0).then_some(p)
    }

    fn accepts(&self, value: &Scalar) -> bool {
        match *value {
            Scalar::Null => self.types & NULL != 0,
            Scalar::Boolean => self.types & BOOLEAN != 0,
            Scalar::String => self.types & STRING != 0,
            Scalar::Integer(n) => self.types & (INTEGER | NUMBER) != 0 && self.in_bounds(n),
            Scalar::Float => {
                let bounded = self.minimum.is_some()
                    || self.maximum.is_some()
                    || self.exclusive_minimum.is_some()
                    || self.exclusive_maximum.is_some();
                // Whether a float is an integer, or within a bound, is left to the validator.
                self.types & NUMBER != 0 && !bounded
            }
            Scalar::Other => false,
        }
    }

    fn in_bounds(&self, n: i128) -> bool {
        self.minimum.is_none_or(|m| n >= m)
            && self.maximum.is_none_or(|m| n <= m)
            && self.exclusive_minimum.is_none_or(|m| n > m)
            && self.exclusive_maximum.is_none_or(|m| n < m)
    }
}

impl FlatSchema {
    /// Compiles `schema` when it is a flat object schema of the 2020-12 dialect (`None`
    /// for anything else: the `Value` path then checks every call).
    pub(crate) fn compile(schema: &JsonObject) -> Option<FlatSchema> {
        let mut properties: Vec<(String, Property)> = Vec::new();
        let mut required_names: &[Value] = &[];
        let mut additional = true;
        for (key, value) in schema {
            match key.as_str() {
                "$schema" if value == DRAFT_2020_12 => {}
                "type" if value == "object" => {}
                "properties" => {
                    for (name, property) in value.as_object()? {
                        properties.push((name.clone(), Property::compile(property)?));
                    }
                }
                "required" => required_names = value.as_array()?,
                "additionalProperties" => additional = value.as_bool()?,
                k if ANNOTATIONS.contains(&k) => {}
                _ => return None,
            }
        }
        if properties.len() > 64 {
            return None;
        }
        let mut required = 0u64;
        for name in required_names {
            let name = name.as_str()?;
            let at = properties.iter().position(|(n, _)| n == name)?;
            required |= 1 << at;
        }
        Some(FlatSchema {
            properties,
            required,
            additional,
        })
    }

    /// Whether `text`, the arguments of a call (a JSON object), is valid for sure (see the
    /// module docs).
    pub(crate) fn accepts(&self, text: &str) -> bool {
        let mut de = serde_json::Deserializer::from_str(text);
        let ok = de.deserialize_any(Check(self)).unwrap_or(false);
        ok && de.end().is_ok()
    }
}

/// A JSON value as far as a flat schema looks at it.
enum Scalar {
    Null,
    Boolean,
    Integer(i128),
    Float,
    String,
    /// An array or an object (read whole, as a `Value` would be).
    Other,
}

/// Reads the arguments object and checks it against the schema.
struct Check<'s>(&'s FlatSchema);

impl<'de> Visitor<'de> for Check<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let schema = self.0;
        let mut seen = 0u64;
        let mut valid = true;
        while let Some(Str(key)) = map.next_key::<Str<'de>>()? {
            let found = schema.properties.iter().position(|(n, _)| *n == *key);
            let value = map.next_value_seed(ReadScalar)?;
            match found {
                Some(at) => {
                    if seen & (1 << at) != 0 {
                        // Sent twice: the validator sees only the last one.
                        valid = false;
                    }
                    seen |= 1 << at;
                    valid &= schema.properties[at].1.accepts(&value);
                }
                None => valid &= schema.additional,
            }
        }
        Ok(valid && schema.required & !seen == 0)
    }
}

/// Reads any JSON value the way `Value` does (`deserialize_any` all the way down: the same
/// nesting limit, the same number parsing), keeping only its kind.
struct ReadScalar;

impl<'de> DeserializeSeed<'de> for ReadScalar {
    type Value = Scalar;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Scalar, E> {
        Ok(Scalar::Boolean)
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Scalar, E> {
        Ok(Scalar::Integer(n.into()))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Scalar, E> {
        Ok(Scalar::Integer(n.into()))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Scalar, E> {
        Ok(Scalar::Float)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Scalar, E> {
        Ok(Scalar::String)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
        while seq.next_element_seed(ReadScalar)?.is_some() {}
        Ok(Scalar::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value_seed(ReadScalar)?;
        }
        Ok(Scalar::Other)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema(v: Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    /// Every `accepts` is also the validator's verdict; `decided` lists the inputs where
    /// `accepts` must say `true` (it may say `false` only for what it leaves undecided).
    fn agrees(schema_value: Value, inputs: &[&str]) {
        let s = schema(schema_value.clone());
        let flat = FlatSchema::compile(&s).expect("a flat schema");
        let validator = jsonschema::validator_for(&schema_value).unwrap();
        for text in inputs {
            let value: Result<Value, _> = serde_json::from_str(text);
            let accepted = flat.accepts(text);
            match value {
                Ok(v) => {
                    let valid = validator.is_valid(&v);
                    if accepted {
                        assert!(valid, "accepted an invalid {text}");
                    }
                    let undecided = text.contains("dup") || text.contains('.');
                    if !undecided {
                        assert_eq!(accepted, valid, "{text}");
                    }
                }
                Err(_) => assert!(!accepted, "accepted unreadable {text}"),
            }
        }
    }

    #[test]
    fn what_schemars_generates_for_plain_structs_is_flat() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Args {
            /// Some text.
            text: String,
            count: u32,
            ratio: f64,
            flag: Option<bool>,
        }
        let s = super::super::tool::schema_object::<Args>();
        assert!(FlatSchema::compile(&s).is_some(), "{s:?}");
        agrees(
            Value::Object(s),
            &[
                r#"{"text":"a","count":1,"ratio":0.5}"#,
                r#"{"text":"a","count":1,"ratio":2,"flag":null}"#,
                r#"{"text":"a","count":1,"ratio":2,"flag":true,"other":[1,{"x":2}]}"#,
                r#"{"text":"a","count":-1,"ratio":2}"#,
                r#"{"text":"a","count":4294967296,"ratio":2}"#,
                r#"{"text":"a","count":"1","ratio":2}"#,
                r#"{"text":"a","ratio":2}"#,
                r#"{"text":1,"count":1,"ratio":2}"#,
                r#"{"text":"a","count":1,"ratio":2,"flag":"yes"}"#,
                r#"{"text":"a","text":"dup","count":1,"ratio":2}"#,
                r#"{"text":"a","count":1.0,"ratio":2}"#,
                r#"{"text":"a","count":1,"ratio":1e400}"#,
                r#"{"text":"a\u00e9\"","count":1,"ratio":2}"#,
                r#"{"text":"a","count":1,"ratio":2"#,
                r#"[1]"#,
                r#"{}"#,
            ],
        );
    }

    #[test]
    fn bounds_and_types_are_checked_exactly() {
        agrees(
            json!({
                "type": "object",
                "properties": {
                    "n": {"type": "integer", "minimum": -2, "exclusiveMaximum": 10},
                    "m": {"type": ["integer", "null"], "exclusiveMinimum": 0, "maximum": 3},
                    "s": {"type": "string", "format": "email"},
                    "x": {"type": "number"}
                },
                "required": ["n"],
                "additionalProperties": false
            }),
            &[
                r#"{"n":-2}"#,
                r#"{"n":-3}"#,
                r#"{"n":9}"#,
                r#"{"n":10}"#,
                r#"{"n":0,"m":null}"#,
                r#"{"n":0,"m":0}"#,
                r#"{"n":0,"m":3}"#,
                r#"{"n":0,"m":4}"#,
                r#"{"n":0,"s":"not an email"}"#,
                r#"{"n":0,"x":1.5}"#,
                r#"{"n":0,"x":-7}"#,
                r#"{"n":0,"x":"7"}"#,
                r#"{"n":0,"y":1}"#,
                r#"{"n":1.5}"#,
                r#"{"m":1}"#,
            ],
        );
    }

    #[test]
    fn nesting_beyond_what_a_value_reads_is_not_accepted() {
        let flat = FlatSchema::compile(&schema(json!({"type": "object"}))).unwrap();
        let deep = format!(r#"{{"a":{}1{}}}"#, "[".repeat(200), "]".repeat(200));
        assert!(serde_json::from_str::<Value>(&deep).is_err());
        assert!(!flat.accepts(&deep));
        let shallow = format!(r#"{{"a":{}1{}}}"#, "[".repeat(20), "]".repeat(20));
        assert!(flat.accepts(&shallow));
    }

    #[test]
    fn other_schemas_are_left_to_the_validator() {
        for s in [
            json!({"type": "object", "properties": {"a": {"type": "array"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}),
            json!({"type": "object", "properties": {"a": true}}),
            json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 0.5}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"}}}),
            json!({"type": "object", "required": ["b"]}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
            json!({"type": "object", "anyOf": [{"required": ["a"]}]}),
        ] {
            assert!(FlatSchema::compile(&schema(s.clone())).is_none(), "{s}");
        }
    }
}
