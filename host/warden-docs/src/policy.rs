//! The policy reference: every key of a policy file with its type, default
//! and description, from the JSON Schema that `warden schema` prints (the
//! doc comments of the policy's types), so that it cannot drift from the code.

use serde_json::{Map, Value};

use crate::schema_text::{cell, one_line, type_of};

/// The page for `schema`, or the keys that have no description (each must
/// have one: the page would otherwise say nothing of it).
pub fn reference(schema: &Value) -> Result<String, String> {
    let empty = Map::new();
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut undescribed = Vec::new();
    let mut page = String::from(
        "# Policy reference\n\n\
         Every key of a policy file, generated from the JSON Schema that `warden schema` prints \
         (`cargo run -p warden-docs -- generate`); a test fails when this page is out of date. \
         Point an editor's YAML support at that schema to have these descriptions as you type.\n\n\
         ## The policy file\n\n",
    );
    page.push_str(&definition("the policy file", schema, &mut undescribed));
    let mut defs: Vec<_> = defs.iter().collect();
    defs.sort_by_key(|(name, _)| *name);
    for (name, def) in defs {
        page.push_str(&format!("\n## {name}\n\n"));
        page.push_str(&definition(name, def, &mut undescribed));
    }
    if undescribed.is_empty() {
        Ok(page)
    } else {
        Err(format!(
            "these policy keys have no description (a doc comment on the field): {}",
            undescribed.join(", ")
        ))
    }
}

fn definition(name: &str, def: &Value, undescribed: &mut Vec<String>) -> String {
    let mut text = String::new();
    if let Some(description) = def.get("description").and_then(Value::as_str) {
        text.push_str(&format!("{}\n\n", one_line(description)));
    }
    if let Some(properties) = def.get("properties").and_then(Value::as_object) {
        let required: Vec<&str> = def
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        text.push_str("| key | type | default | description |\n|---|---|---|---|\n");
        let mut properties: Vec<_> = properties.iter().collect();
        properties.sort_by_key(|(key, _)| *key);
        for (key, property) in properties {
            let description = property
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_else(|| {
                    undescribed.push(format!("{name}.{key}"));
                    ""
                });
            let default = match property.get("default") {
                Some(value) => format!("`{value}`"),
                None if required.contains(&key.as_str()) => "required".to_owned(),
                None => "none".to_owned(),
            };
            text.push_str(&format!(
                "| `{key}` | {} | {} | {} |\n",
                cell(&type_of(property)),
                cell(&default),
                cell(&one_line(description))
            ));
        }
    } else if let Some(variants) = def.get("oneOf").and_then(Value::as_array) {
        text.push_str("One of:\n\n");
        for variant in variants {
            let description = variant
                .get("description")
                .and_then(Value::as_str)
                .map(one_line);
            let line = match description {
                Some(description) => format!("- {}: {description}\n", type_of(variant)),
                None => format!("- {}\n", type_of(variant)),
            };
            text.push_str(&line);
        }
    } else {
        text.push_str(&format!("Type: {}\n", type_of(def)));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "description": "A policy.",
            "properties": {
                "version": { "description": "Format version.", "type": "integer" },
                "sandbox": { "description": "The sandbox.", "$ref": "#/$defs/SandboxSpec" }
            },
            "required": ["version"],
            "$defs": {
                "SandboxSpec": {
                    "description": "What a tool sees.",
                    "properties": {
                        "suffixes": { "description": "Suffixes, `[.md]` | none.", "type": ["array", "null"], "items": { "type": "string" }, "default": null },
                        "paths": { "description": "Mounts.", "type": "object", "additionalProperties": { "$ref": "#/$defs/Mode" } }
                    }
                },
                "Mode": { "oneOf": [ { "description": "Read-only.", "const": "ro" }, { "description": "Read-write.", "const": "rw" } ] }
            }
        })
    }

    #[test]
    fn every_key_is_listed_with_its_type_default_and_description() {
        let page = reference(&schema()).unwrap();
        assert!(
            page.contains("| `version` | integer | required | Format version. |"),
            "{page}"
        );
        assert!(
            page.contains("| `sandbox` | [SandboxSpec](#sandboxspec) | none | The sandbox. |"),
            "{page}"
        );
        assert!(
            page.contains(
                "| `suffixes` | list of string or null | `null` | Suffixes, `[.md]` \\| none. |"
            ),
            "{page}"
        );
        assert!(
            page.contains("| `paths` | map of names to [Mode](#mode) | none | Mounts. |"),
            "{page}"
        );
        assert!(
            page.contains("## Mode\n\nOne of:\n\n- `ro`: Read-only.\n- `rw`: Read-write.\n"),
            "{page}"
        );
    }

    #[test]
    fn a_key_without_a_description_fails_the_page() {
        let mut schema = schema();
        schema["$defs"]["SandboxSpec"]["properties"]["paths"]
            .as_object_mut()
            .unwrap()
            .remove("description");
        assert_eq!(
            reference(&schema).unwrap_err(),
            "these policy keys have no description (a doc comment on the field): SandboxSpec.paths"
        );
    }
}
