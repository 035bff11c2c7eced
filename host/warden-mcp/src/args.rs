//! A tool's JSON arguments into its typed form, with errors that name the field.

use rmcp::model::JsonObject;
use serde::de::DeserializeOwned;

/// Parses `arguments` (absent means `{}`); an error names the field at fault,
/// e.g. `Invalid arguments for read_file: max_chars: invalid type: string "x", expected usize`.
pub fn parse<T: DeserializeOwned>(tool: &str, arguments: Option<JsonObject>) -> Result<T, String> {
    let value = serde_json::Value::Object(arguments.unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner().to_string();
        if field == "." {
            format!("Invalid arguments for {tool}: {inner}")
        } else {
            format!("Invalid arguments for {tool}: {field}: {inner}")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        path: String,
        #[serde(default)]
        n: usize,
    }

    fn object(v: serde_json::Value) -> Option<rmcp::model::JsonObject> {
        v.as_object().cloned()
    }

    #[test]
    fn errors_name_the_field() {
        let e = parse::<Args>("t", object(serde_json::json!({"path": "/a", "n": "x"}))).unwrap_err();
        assert_eq!(e, "Invalid arguments for t: n: invalid type: string \"x\", expected usize");
        let e = parse::<Args>("t", None).unwrap_err();
        assert_eq!(e, "Invalid arguments for t: missing field `path`");
        let e = parse::<Args>("t", object(serde_json::json!({"path": "/a", "file": 1}))).unwrap_err();
        assert_eq!(e, "Invalid arguments for t: file: unknown field `file`, expected `path` or `n`");
    }
}
