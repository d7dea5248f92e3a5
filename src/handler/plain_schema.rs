//! Input schemas plain enough to check on the arguments' JSON text as it arrived, without
//! reading it into a `serde_json::Value` first: an object whose properties are scalars
//! (`null`, `boolean`, `integer`, `number`, `string`, or a list of these), with integer
//! bounds, `required` and `additionalProperties`, plus annotations. That is what `schemars`
//! generates for a flat argument struct of strings, numbers, booleans and their `Option`s,
//! the common tool.
//!
//! The check is one pass over the text that allocates nothing (except for a property name
//! written with escapes). It only ever answers "valid" for arguments the tool's compiled
//! validator accepts too (the unit tests compare the two); any doubt (a float where an
//! integer is wanted, a nested value, a duplicated name) answers "not shown valid", and the
//! call takes the general path, which validates with the compiled validator and reports
//! what is wrong exactly as before. A schema with any other keyword is not plain.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::protocol::JsonObject;

/// The largest bound magnitude kept: every integer up to it is exact as an `f64`.
const EXACT_IN_F64: f64 = 9_007_199_254_740_992.0;

/// The most properties a plain schema has (one bit each in a `u64`).
const MAX_PROPERTIES: usize = 64;

/// The draft `schemars` writes into `$schema`; the only one a plain schema may name.
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Formats that are annotations only: `schemars` writes them for Rust's number types, and
/// the validator knows none of them, so they never assert anything.
const NUMBER_FORMATS: &[&str] = &[
    "int8", "int16", "int32", "int64", "int", "uint8", "uint16", "uint32", "uint64", "uint",
    "float", "double",
];

/// Keywords that only annotate: they never make an instance invalid.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// The JSON types a property may take, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Kinds(u8);

impl Kinds {
    const NULL: u8 = 1;
    const BOOLEAN: u8 = 2;
    const INTEGER: u8 = 4;
    /// `number` takes integers too.
    const NUMBER: u8 = 8;
    const STRING: u8 = 16;
    /// Any value, an array or an object too (a property without `type`).
    const ANY: Kinds = Kinds(0xff);

    fn named(name: &str) -> Option<u8> {
        Some(match name {
            "null" => Self::NULL,
            "boolean" => Self::BOOLEAN,
            "integer" => Self::INTEGER,
            "number" => Self::NUMBER,
            "string" => Self::STRING,
            _ => return None,
        })
    }

    fn of(schema: &Value) -> Option<Kinds> {
        match schema {
            Value::String(name) => Kinds::named(name).map(Kinds),
            Value::Array(names) if !names.is_empty() => names.iter().try_fold(Kinds(0), |k, n| {
                Some(Kinds(k.0 | Kinds::named(n.as_str()?)?))
            }),
            _ => None,
        }
    }

    fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

/// One property: the types it takes and its integer bounds.
#[derive(Debug)]
struct Property {
    name: Box<str>,
    kinds: Kinds,
    minimum: Option<i64>,
    maximum: Option<i64>,
}

impl Property {
    fn of(name: &str, schema: &Value) -> Option<Property> {
        let mut property = Property {
            name: name.into(),
            kinds: Kinds::ANY,
            minimum: None,
            maximum: None,
        };
        let keywords = match schema {
            Value::Bool(true) => return Some(property),
            Value::Object(keywords) => keywords,
            _ => return None,
        };
        for (keyword, value) in keywords {
            match keyword.as_str() {
                "type" => property.kinds = Kinds::of(value)?,
                "format" if NUMBER_FORMATS.contains(&value.as_str()?) => {}
                "minimum" => property.minimum = Some(exact_integer(value)?),
                "maximum" => property.maximum = Some(exact_integer(value)?),
                k if ANNOTATIONS.contains(&k) => {}
                _ => return None,
            }
        }
        Some(property)
    }

    /// Whether `seen` is one of the property's types and within its bounds.
    fn admits(&self, seen: Scalar) -> bool {
        let k = self.kinds;
        match seen {
            Scalar::Null => k.has(Kinds::NULL),
            Scalar::Bool => k.has(Kinds::BOOLEAN),
            Scalar::String => k.has(Kinds::STRING),
            Scalar::Other => k == Kinds::ANY,
            Scalar::Integer(n) => k.has(Kinds::INTEGER | Kinds::NUMBER) && self.within(n),
            // A float is never shown to be an integer here (the validator may count `1.0` as
            // one; the general path decides).
            Scalar::Float(f) => k.has(Kinds::NUMBER) && self.within_float(f),
        }
    }

    fn within(&self, n: i128) -> bool {
        self.minimum.is_none_or(|m| n >= i128::from(m))
            && self.maximum.is_none_or(|m| n <= i128::from(m))
    }

    /// The bounds are integers exact in an `f64`, so comparing floats is exact.
    fn within_float(&self, f: f64) -> bool {
        self.minimum.is_none_or(|m| f >= m as f64) && self.maximum.is_none_or(|m| f <= m as f64)
    }
}

/// A bound that is an integer of at most 2^53 in magnitude (so exact as an `f64` too).
fn exact_integer(value: &Value) -> Option<i64> {
    let n = value.as_number()?;
    let i = match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => i,
        (None, Some(f)) if f.fract() == 0.0 && f.abs() <= EXACT_IN_F64 => f as i64,
        _ => return None,
    };
    (i.unsigned_abs() <= EXACT_IN_F64 as u64).then_some(i)
}

/// A tool's input schema, when it is plain (see the module's docs).
#[derive(Debug)]
pub(crate) struct PlainSchema {
    properties: Box<[Property]>,
    /// One bit per property that must be present.
    required: u64,
    /// `additionalProperties: false`.
    closed: bool,
}

impl PlainSchema {
    /// The schema, if it is plain.
    pub(crate) fn of(schema: &JsonObject) -> Option<PlainSchema> {
        let mut properties = Vec::new();
        let mut required: &[Value] = &[];
        let mut closed = false;
        for (keyword, value) in schema {
            match keyword.as_str() {
                "$schema" if value.as_str()? == DRAFT_2020_12 => {}
                "type" if value.as_str()? == "object" => {}
                "properties" => {
                    for (name, schema) in value.as_object()? {
                        properties.push(Property::of(name, schema)?);
                    }
                }
                "required" => required = value.as_array()?,
                "additionalProperties" => closed = !value.as_bool()?,
                k if ANNOTATIONS.contains(&k) => {}
                _ => return None,
            }
        }
        let mut at = Vec::with_capacity(required.len());
        for name in required {
            let name = name.as_str()?;
            at.push(match properties.iter().position(|p| &*p.name == name) {
                Some(at) => at,
                // Required but not described: present, and of any type (unless closed,
                // where it could never be sent at all).
                None if closed => return None,
                None => {
                    properties.push(Property::of(name, &Value::Bool(true))?);
                    properties.len() - 1
                }
            });
        }
        if properties.len() > MAX_PROPERTIES {
            return None;
        }
        let bits = at.into_iter().fold(0u64, |bits, at| bits | 1 << at);
        Some(PlainSchema {
            properties: properties.into(),
            required: bits,
            closed,
        })
    }

    /// Whether `arguments` (the JSON text of `params.arguments`) is shown valid: an object
    /// whose every member fits, with every required one present.
    pub(crate) fn admits(&self, arguments: &str) -> bool {
        let mut de = serde_json::Deserializer::from_str(arguments);
        match de.deserialize_map(Members(self)) {
            Ok(seen) => seen & self.required == self.required && de.end().is_ok(),
            Err(_) => false,
        }
    }

    fn property(&self, name: &str) -> Option<(usize, &Property)> {
        self.properties
            .iter()
            .enumerate()
            .find(|(_, p)| &*p.name == name)
    }
}

/// What a member's value is, as far as a plain schema asks.
#[derive(Debug, Clone, Copy)]
enum Scalar {
    Null,
    Bool,
    /// Read as a `u64` or an `i64`; both fit an `i128`.
    Integer(i128),
    Float(f64),
    String,
    /// An array or an object (skipped, not looked into).
    Other,
}

/// A member's name, borrowed from the text unless it has escapes.
struct Name<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> de::Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<Scalar, E> {
                Ok(Scalar::Null)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Scalar, E> {
                Ok(Scalar::Bool)
            }
            fn visit_u64<E>(self, n: u64) -> Result<Scalar, E> {
                Ok(Scalar::Integer(n.into()))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Scalar, E> {
                Ok(Scalar::Integer(n.into()))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Scalar, E> {
                Ok(Scalar::Float(n))
            }
            fn visit_str<E>(self, _: &str) -> Result<Scalar, E> {
                Ok(Scalar::String)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// Walks an object's members against a plain schema; answers the bits of the properties
/// seen, or an error at the first member that does not fit.
struct Members<'s>(&'s PlainSchema);

impl<'de> Visitor<'de> for Members<'_> {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
        let mut seen = 0u64;
        while let Some(Name(name)) = map.next_key::<Name<'de>>()? {
            match self.0.property(&name) {
                Some((at, property)) => {
                    if !property.admits(map.next_value::<Scalar>()?) {
                        return Err(de::Error::custom("does not fit"));
                    }
                    // The general path reads the last of duplicated names only: leave
                    // those to it.
                    if seen & (1 << at) != 0 {
                        return Err(de::Error::custom("duplicated"));
                    }
                    seen |= 1 << at;
                }
                None if self.0.closed => return Err(de::Error::custom("not a property")),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(seen)
    }
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde_json::json;

    use super::*;
    use crate::handler::tool::schema_object;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Echo {
        /// The text.
        text: String,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    #[serde(deny_unknown_fields)]
    struct Mixed {
        query: String,
        limit: Option<u32>,
        #[schemars(range(min = -5, max = 20))]
        offset: i16,
        ratio: f64,
        exact: bool,
    }

    /// Every instance the plain check admits, the compiled validator accepts; and the plain
    /// check does admit the ordinary valid ones (`expected`).
    fn agree(schema: &JsonObject, cases: &[(&str, bool)]) {
        let plain = PlainSchema::of(schema).expect("a plain schema");
        let validator = jsonschema::validator_for(&Value::Object(schema.clone())).unwrap();
        for (text, expected) in cases {
            let admitted = plain.admits(text);
            let valid = validator.is_valid(&serde_json::from_str(text).unwrap());
            assert!(!admitted || valid, "{text}: admitted but invalid");
            assert_eq!(admitted, *expected, "{text}");
        }
    }

    #[test]
    fn a_flat_struct_of_strings_is_checked_on_its_text() {
        agree(
            &schema_object::<Echo>(),
            &[
                (r#"{"text":"hello"}"#, true),
                (r#"{"text":"he said \"hi\"","extra":[1,{"a":2}]}"#, true),
                (r#"{"te\u0078t":"escaped name"}"#, true),
                (r#"{}"#, false),
                (r#"{"text":5}"#, false),
                (r#"{"text":null}"#, false),
                (r#"{"text":["a"]}"#, false),
                (r#"{"text":"a","text":"b"}"#, false),
                (r#"["text"]"#, false),
                (r#""text""#, false),
                (r#"null"#, false),
            ],
        );
    }

    #[test]
    fn numbers_bounds_options_and_a_closed_object() {
        let ok = r#""query":"q","offset":3,"ratio":0.5,"exact":true"#;
        let with = |more: &str| format!("{{{ok}{more}}}");
        let cases: Vec<(String, bool)> = vec![
            (with(""), true),
            (with(r#","limit":null"#), true),
            (with(r#","limit":7"#), true),
            (with(r#","limit":-1"#), false),
            // The schema has no upper bound for a `u32` (reading it as one fails later, on
            // either path, to the same answer).
            (with(r#","limit":4294967296"#), true),
            // Counted an integer by the validator, left to the general path here.
            (with(r#","limit":7.0"#), false),
            (with(r#","limit":"7""#), false),
            (with(r#","other":1"#), false),
            (
                r#"{"query":"q","offset":-5,"ratio":2,"exact":false}"#.into(),
                true,
            ),
            (
                r#"{"query":"q","offset":20,"ratio":-1e300,"exact":false}"#.into(),
                true,
            ),
            (
                r#"{"query":"q","offset":-6,"ratio":1,"exact":false}"#.into(),
                false,
            ),
            (
                r#"{"query":"q","offset":21,"ratio":1,"exact":false}"#.into(),
                false,
            ),
            (
                r#"{"query":"q","offset":3,"ratio":"1","exact":false}"#.into(),
                false,
            ),
            (r#"{"query":"q","offset":3,"ratio":1}"#.into(), false),
        ];
        let cases: Vec<(&str, bool)> = cases.iter().map(|(t, e)| (t.as_str(), *e)).collect();
        agree(&schema_object::<Mixed>(), &cases);
    }

    #[test]
    fn the_default_schema_takes_an_empty_object_only() {
        let mut schema = JsonObject::new();
        schema.insert("type".into(), "object".into());
        schema.insert("additionalProperties".into(), false.into());
        agree(&schema, &[("{}", true), (r#"{"a":1}"#, false)]);
    }

    #[test]
    fn required_names_without_a_description_take_any_value() {
        let schema = json!({"type": "object", "required": ["a"]});
        agree(
            schema.as_object().unwrap(),
            &[
                (r#"{"a":[1]}"#, true),
                (r#"{"a":null}"#, true),
                ("{}", false),
            ],
        );
    }

    #[test]
    fn other_schemas_are_not_plain() {
        for schema in [
            json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}}),
            json!({"type": "object", "properties": {"a": {"type": "array"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "format": "email"}}}),
            json!({"type": "object", "properties": {"a": {"type": "number", "minimum": 0.5}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}),
            json!({"type": "object", "properties": {"a": false}}),
            json!({"type": "object", "required": ["a"], "additionalProperties": false}),
            json!({"type": "object", "x-mcp-header": "A"}),
            json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}),
            json!({"type": "object", "patternProperties": {"^a": {"type": "string"}}}),
        ] {
            assert!(
                PlainSchema::of(schema.as_object().unwrap()).is_none(),
                "{schema}"
            );
        }
    }
}
