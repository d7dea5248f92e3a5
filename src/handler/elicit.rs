//! Form elicitation from a Rust type: `T`'s JSON Schema, checked against and reduced to the
//! restricted schema the spec allows in `requestedSchema` (a flat object whose properties
//! are strings, numbers, booleans or enums, single or multiple choice).

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::protocol::JsonObject;

/// The string formats a form field may carry.
const FORMATS: [&str; 4] = ["date", "date-time", "email", "uri"];

/// `T`'s schema as a `requestedSchema`, or why `T` cannot be asked for in a form.
pub(crate) fn form_schema<T: JsonSchema>() -> Result<JsonObject, String> {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let root = settings.into_generator().into_root_schema_for::<T>();
    let root = serde_json::to_value(root).map_err(|e| e.to_string())?;
    let type_name = std::any::type_name::<T>();
    let properties = match (root.get("type"), root.get("properties")) {
        (Some(t), Some(Value::Object(p))) if t == "object" => p,
        _ => return Err(format!("{type_name} is not a struct with named fields")),
    };
    let mut fields = Map::new();
    for (name, schema) in properties {
        let field = field(schema).map_err(|why| {
            format!("field `{name}` of {type_name} cannot be asked for in a form: {why}")
        })?;
        fields.insert(name.clone(), field);
    }
    let mut out = JsonObject::new();
    out.insert("type".into(), "object".into());
    out.insert("properties".into(), Value::Object(fields));
    if let Some(Value::Array(required)) = root.get("required") {
        if !required.is_empty() {
            out.insert("required".into(), Value::Array(required.clone()));
        }
    }
    Ok(out)
}

/// The schema without a `null` alternative (`Option<T>` fields).
fn non_null(schema: &Value) -> Result<Value, String> {
    let mut s = schema.clone();
    if let Some(Value::Array(types)) = s.get("type") {
        let rest: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        match rest.as_slice() {
            [one] => s["type"] = (*one).clone(),
            _ => return Err(format!("it may be any of {types:?}")),
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(alts)) = s.get(key) else {
            continue;
        };
        let rest: Vec<&Value> = alts
            .iter()
            .filter(|a| a.get("type") != Some(&json!("null")))
            .collect();
        if rest.len() < alts.len() {
            if let [one] = rest.as_slice() {
                let mut merged = (*one).clone();
                for k in ["description", "title", "default"] {
                    if let (Some(v), Value::Object(m)) = (s.get(k), &mut merged) {
                        m.entry(k).or_insert(v.clone());
                    }
                }
                return non_null(&merged);
            }
        }
    }
    Ok(s)
}

/// Copies the keys in `keys` that `schema` has.
fn copy(schema: &Value, out: &mut Map<String, Value>, keys: &[&str]) {
    for k in keys {
        if let Some(v) = schema.get(*k) {
            out.insert((*k).to_owned(), v.clone());
        }
    }
}

/// The options of an enum schema: `(value, label)` pairs, or `None` when it is no enum of
/// strings.
fn options(schema: &Value) -> Option<Vec<(String, Option<String>)>> {
    if let Some(Value::Array(values)) = schema.get("enum") {
        return values
            .iter()
            .map(|v| v.as_str().map(|s| (s.to_owned(), None)))
            .collect();
    }
    let Some(Value::Array(alts)) = schema.get("oneOf").or_else(|| schema.get("anyOf")) else {
        return None;
    };
    let mut out = Vec::new();
    for alt in alts {
        let label = alt
            .get("title")
            .or_else(|| alt.get("description"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        match (alt.get("const"), alt.get("enum")) {
            (Some(Value::String(c)), _) => out.push((c.clone(), label)),
            (None, Some(Value::Array(vs))) => {
                for v in vs {
                    out.push((v.as_str()?.to_owned(), label.clone()));
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

/// An enum field (single choice, or the items of a multiple choice).
fn choice(options: &[(String, Option<String>)], key: &str, out: &mut Map<String, Value>) {
    out.insert("type".into(), "string".into());
    if options.iter().all(|(_, label)| label.is_none()) {
        out.insert(
            "enum".into(),
            options.iter().map(|(v, _)| json!(v)).collect(),
        );
    } else {
        let titled = options
            .iter()
            .map(|(v, label)| json!({"const": v, "title": label.as_deref().unwrap_or(v)}))
            .collect();
        out.insert(key.into(), titled);
    }
}

/// One property, reduced to a primitive schema definition.
fn field(schema: &Value) -> Result<Value, String> {
    let schema = non_null(schema)?;
    let mut out = Map::new();
    copy(&schema, &mut out, &["title", "description"]);
    if let Some(opts) = options(&schema) {
        choice(&opts, "oneOf", &mut out);
        copy(&schema, &mut out, &["default"]);
        return Ok(Value::Object(out));
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => {
            out.insert("type".into(), "string".into());
            copy(&schema, &mut out, &["minLength", "maxLength", "default"]);
            if let Some(f) = schema.get("format").and_then(Value::as_str) {
                if FORMATS.contains(&f) {
                    out.insert("format".into(), f.into());
                }
            }
        }
        Some(t @ ("integer" | "number")) => {
            out.insert("type".into(), t.into());
            copy(&schema, &mut out, &["minimum", "maximum", "default"]);
        }
        Some("boolean") => {
            out.insert("type".into(), "boolean".into());
            copy(&schema, &mut out, &["default"]);
        }
        Some("array") => {
            let items = schema.get("items").map(non_null).transpose()?;
            let Some(opts) = items.as_ref().and_then(options) else {
                return Err("a list must be of a unit-variant enum (a multiple choice)".into());
            };
            let mut item = Map::new();
            choice(&opts, "anyOf", &mut item);
            out.insert("type".into(), "array".into());
            out.insert("items".into(), Value::Object(item));
            copy(&schema, &mut out, &["minItems", "maxItems", "default"]);
        }
        Some("object") => return Err("forms are flat: no nested objects".into()),
        _ => return Err("only strings, numbers, booleans and enums can be asked for".into()),
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;

    use super::*;

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Size {
        Small,
        Large,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    enum Topping {
        /// Cheese
        Cheese,
        /// Olives
        Olives,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Order {
        /// Your name.
        name: String,
        /// How many.
        #[schemars(range(min = 1, max = 10))]
        count: u32,
        gift: bool,
        size: Size,
        toppings: Vec<Topping>,
        email: Option<String>,
    }

    #[test]
    fn a_flat_struct_becomes_a_restricted_schema() {
        let s = Value::Object(form_schema::<Order>().unwrap());
        assert_eq!(s["type"], "object");
        assert_eq!(
            s["properties"]["name"],
            json!({"type": "string", "description": "Your name."})
        );
        assert_eq!(
            s["properties"]["count"],
            json!({"type": "integer", "description": "How many.", "minimum": 1, "maximum": 10})
        );
        assert_eq!(s["properties"]["gift"], json!({"type": "boolean"}));
        assert_eq!(
            s["properties"]["size"],
            json!({"type": "string", "enum": ["small", "large"]})
        );
        assert_eq!(
            s["properties"]["toppings"]["items"]["anyOf"],
            json!([{"const": "Cheese", "title": "Cheese"}, {"const": "Olives", "title": "Olives"}])
        );
        assert_eq!(s["properties"]["email"], json!({"type": "string"}));
        let required: Vec<&str> = s["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(required.contains(&"name") && !required.contains(&"email"));
    }

    #[test]
    fn nested_or_open_types_are_refused_with_the_field_named() {
        #[allow(dead_code)]
        #[derive(JsonSchema)]
        struct Inner {
            a: u8,
        }
        #[allow(dead_code)]
        #[derive(JsonSchema)]
        struct Nested {
            inner: Inner,
        }
        #[allow(dead_code)]
        #[derive(JsonSchema)]
        struct Listy {
            tags: Vec<String>,
        }
        let e = form_schema::<Nested>().unwrap_err();
        assert!(e.contains("`inner`") && e.contains("nested"), "{e}");
        let e = form_schema::<Listy>().unwrap_err();
        assert!(e.contains("`tags`"), "{e}");
        assert!(form_schema::<String>().is_err());
    }
}
