//! Registry credentials from a Docker config file (`~/.docker/config.json`):
//! the `auths` entries Docker writes, `auth` (base64 `user:password`) or
//! `username` and `password`. Credential helpers are never run.

use std::path::{Path, PathBuf};

use base64::Engine;
use serde::Deserialize;

/// `user:password` for each registry the file names.
#[derive(Debug, Default, Clone)]
pub struct Credentials {
    entries: Vec<(String, Basic)>,
}

#[derive(Clone, PartialEq, Eq)]
pub struct Basic {
    pub user: String,
    pub password: String,
}

/// Never the password, in a log or a panic.
impl std::fmt::Debug for Basic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Basic").field("user", &self.user).field("password", &"(hidden)").finish()
    }
}

impl Basic {
    pub fn header(&self) -> String {
        let pair = format!("{}:{}", self.user, self.password);
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
    }
}

#[derive(Deserialize)]
struct DockerConfig {
    #[serde(default)]
    auths: std::collections::BTreeMap<String, AuthEntry>,
}

#[derive(Deserialize)]
struct AuthEntry {
    auth: Option<String>,
    username: Option<String>,
    password: Option<String>,
}

impl Credentials {
    /// The file given, else `$DOCKER_CONFIG/config.json`, else
    /// `~/.docker/config.json`; a default file that is absent gives none.
    pub fn load(given: Option<&Path>) -> Result<Credentials, String> {
        let (file, must_exist) = match given {
            Some(file) => (file.to_path_buf(), true),
            None => match default_file() {
                Some(file) => (file, false),
                None => return Ok(Credentials::default()),
            },
        };
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if !must_exist && e.kind() == std::io::ErrorKind::NotFound => return Ok(Credentials::default()),
            Err(e) => return Err(format!("cannot read the registry config {}: {e}", file.display())),
        };
        Credentials::parse(&text).map_err(|e| format!("the registry config {}: {e}", file.display()))
    }

    pub fn parse(text: &str) -> Result<Credentials, String> {
        let config: DockerConfig = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let mut entries = Vec::new();
        for (key, entry) in config.auths {
            let basic = match (entry.auth, entry.username, entry.password) {
                (Some(auth), _, _) if !auth.is_empty() => decode(&auth).map_err(|e| format!("auths.\"{key}\".auth: {e}"))?,
                (_, Some(user), Some(password)) => Basic { user, password },
                _ => continue,
            };
            entries.push((registry_of(&key).to_owned(), basic));
        }
        Ok(Credentials { entries })
    }

    /// The credentials for `registry` (`host[:port]`), if any: `:443` or
    /// not, and Docker Hub under any of its names.
    pub fn for_registry(&self, registry: &str) -> Option<&Basic> {
        let wanted = canonical(registry);
        self.entries.iter().find(|(key, _)| canonical(key) == wanted).map(|(_, basic)| basic)
    }
}

fn canonical(registry: &str) -> String {
    let lower = registry.to_ascii_lowercase();
    let host = lower.strip_suffix(":443").unwrap_or(&lower);
    match host {
        "docker.io" | "registry-1.docker.io" | "registry.hub.docker.com" => "index.docker.io".to_owned(),
        host => host.to_owned(),
    }
}

fn default_file() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG") {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".docker/config.json"))
}

/// Docker keys entries by `host[:port]`, sometimes as a URL with a path.
fn registry_of(key: &str) -> &str {
    let key = key.strip_prefix("https://").or_else(|| key.strip_prefix("http://")).unwrap_or(key);
    key.split('/').next().unwrap_or(key)
}

fn decode(auth: &str) -> Result<Basic, String> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(auth.trim()).map_err(|_| "is not base64".to_owned())?;
    let text = String::from_utf8(bytes).map_err(|_| "is not UTF-8 user:password".to_owned())?;
    let (user, password) = text.split_once(':').ok_or("is not user:password")?;
    Ok(Basic { user: user.to_owned(), password: password.to_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_keys_are_matched_by_registry() {
        let creds = Credentials::parse(
            r#"{"auths":{"https://index.docker.io/v1/":{"auth":"dTpw"},"127.0.0.1:5000":{"username":"a","password":"b"}},"credsStore":"desktop"}"#,
        )
        .unwrap();
        assert_eq!(creds.for_registry("index.docker.io"), Some(&Basic { user: "u".into(), password: "p".into() }));
        assert_eq!(creds.for_registry("registry-1.docker.io:443"), creds.for_registry("index.docker.io"));
        assert!(!format!("{:?}", creds.for_registry("index.docker.io")).contains("\"p\""));
        assert_eq!(creds.for_registry("127.0.0.1:5000").unwrap().header(), "Basic YTpi");
        assert_eq!(creds.for_registry("127.0.0.1:5001"), None);
    }

    #[test]
    fn a_malformed_auth_is_an_error_not_anonymous() {
        let error = Credentials::parse(r#"{"auths":{"r":{"auth":"!!"}}}"#).unwrap_err();
        assert_eq!(error, "auths.\"r\".auth: is not base64");
    }
}
