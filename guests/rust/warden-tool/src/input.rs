//! A tool's input: a JSON object with the schema's required fields, then the
//! tool's own type.

use serde_json::Value;

use crate::Error;

/// The input text as a JSON object.
pub fn object(input: &str) -> Result<Value, Error> {
    let value: Value = serde_json::from_str(input).map_err(|e| Error::InvalidInput(format!("the input is not JSON: {e}")))?;
    if !value.is_object() {
        return Err(Error::InvalidInput("the input must be a JSON object".into()));
    }
    Ok(value)
}

/// The input as `I`, once every `required` field is there.
pub fn parse<I: serde::de::DeserializeOwned>(input: Value, required: &[String]) -> Result<I, Error> {
    if let Some(missing) = required.iter().find(|field| input.get(field.as_str()).is_none()) {
        return Err(Error::InvalidInput(format!("missing field '{missing}'")));
    }
    serde_json::from_value(input).map_err(|e| Error::InvalidInput(e.to_string()))
}
