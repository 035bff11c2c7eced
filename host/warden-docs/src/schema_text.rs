//! JSON Schema in words, for the reference pages' tables.

use serde_json::Value;

/// A schema's type in words, with links to the definitions it names.
pub fn type_of(schema: &Value) -> String {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or(reference);
        return format!("[{name}](#{})", name.to_lowercase());
    }
    if let Some(constant) = schema.get("const") {
        return format!("`{}`", plain(constant));
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(|value| format!("`{}`", plain(value)))
            .collect::<Vec<_>>()
            .join(" or ");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(variants) = schema.get(key).and_then(Value::as_array) {
            return variants
                .iter()
                .map(type_of)
                .collect::<Vec<_>>()
                .join(" or ");
        }
    }
    match schema.get("type") {
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .map(|one| named_type(one, schema))
            .collect::<Vec<_>>()
            .join(" or "),
        Some(Value::String(one)) => named_type(one, schema),
        _ => "any".to_owned(),
    }
}

fn named_type(name: &str, schema: &Value) -> String {
    match name {
        "array" => match schema.get("items") {
            Some(items) => format!("list of {}", type_of(items)),
            None => "list".to_owned(),
        },
        "object" => match schema.get("additionalProperties") {
            Some(values) if values.is_object() => format!("map of names to {}", type_of(values)),
            _ => "object".to_owned(),
        },
        other => other.to_owned(),
    }
}

fn plain(value: &Value) -> String {
    value
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| value.to_string())
}

pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text that stays in its table cell.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}
