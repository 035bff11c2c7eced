//! `WWW-Authenticate` challenges: `Basic realm="..."` and
//! `Bearer realm="...",service="...",scope="..."`.

#[derive(Debug, PartialEq, Eq)]
pub enum Challenge {
    Basic,
    Bearer { realm: String, service: Option<String>, scope: Option<String> },
}

impl Challenge {
    pub fn parse(header: &str) -> Result<Challenge, String> {
        let header = header.trim();
        let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
        if scheme.eq_ignore_ascii_case("basic") {
            return Ok(Challenge::Basic);
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(format!("the registry asks for '{}' authentication, which Warden does not speak", crate::shown(scheme)));
        }
        let params = params(rest)?;
        let get = |key: &str| params.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v.clone());
        let realm = get("realm").ok_or("the registry's Bearer challenge names no realm")?;
        Ok(Challenge::Bearer { realm, service: get("service"), scope: get("scope") })
    }
}

/// `key="value", key=token, ...`; quoted values may hold commas and `\"`.
fn params(text: &str) -> Result<Vec<(String, String)>, String> {
    let malformed = || format!("the registry's challenge '{}' is malformed", crate::shown(text));
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=').ok_or_else(malformed)?;
        let key = key.trim().to_owned();
        let mut value = String::new();
        rest = if let Some(quoted) = after.strip_prefix('"') {
            let mut chars = quoted.char_indices();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => value.push(chars.next().ok_or_else(malformed)?.1),
                    '"' => {
                        end = Some(i + 1);
                        break;
                    }
                    c => value.push(c),
                }
            }
            &quoted[end.ok_or_else(malformed)?..]
        } else {
            let end = after.find(',').unwrap_or(after.len());
            value.push_str(after[..end].trim());
            &after[end..]
        };
        out.push((key, value));
        rest = rest.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_challenges_keep_commas_inside_quotes() {
        let challenge =
            Challenge::parse(r#"Bearer realm="https://auth.example/token",service="reg",scope="repository:a/b:pull,push""#).unwrap();
        assert_eq!(
            challenge,
            Challenge::Bearer {
                realm: "https://auth.example/token".into(),
                service: Some("reg".into()),
                scope: Some("repository:a/b:pull,push".into())
            }
        );
        assert_eq!(Challenge::parse(r#"Basic realm="x""#).unwrap(), Challenge::Basic);
        assert!(Challenge::parse(r#"Bearer realm="unterminated"#).is_err());
        assert!(Challenge::parse("Negotiate").is_err());
    }
}
