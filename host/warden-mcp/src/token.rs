//! The bearer token every HTTP request must carry, loopback included. A
//! sandboxed command under `network: true`, a component with network access
//! or another local user can all reach a loopback port; without the token,
//! any of them could call the tools and answer its own approval questions.

use std::path::{Path, PathBuf};

use axum::http::HeaderValue;
use warden_policy::Policy;

/// The token, kept as its digest: requests are compared with it in constant
/// time whatever their length.
pub struct Token {
    digest: [u8; 32],
    /// Where the token is, for the clients' configuration.
    pub file: PathBuf,
    /// Made by this process (and locked while it lives): the file goes when it does.
    made: Option<warden_policy::PrivateFile>,
}

impl Token {
    /// The token in `file` (`--token-file`): a file of this user's that
    /// nobody else may read, outside everything the policy lets a tool read.
    pub fn read(file: &Path, policy: &Policy) -> Result<Token, String> {
        use std::os::unix::fs::MetadataExt;
        let shown = file.display();
        let text = std::fs::read_to_string(file).map_err(|e| format!("--token-file {shown}: {e}"))?;
        let meta = std::fs::metadata(file).map_err(|e| format!("--token-file {shown}: {e}"))?;
        if meta.uid() != rustix::process::geteuid().as_raw() {
            return Err(format!("--token-file {shown} belongs to uid {}, not to the user serving; use a file of your own", meta.uid()));
        }
        if meta.mode() & 0o077 != 0 {
            return Err(format!(
                "--token-file {shown} may be read by other users (mode {:04o}); make it yours alone: chmod 600 {shown}",
                meta.mode() & 0o7777
            ));
        }
        let real = file.canonicalize().map_err(|e| format!("--token-file {shown}: {e}"))?;
        if let Some(why) = exposed_by(&real, policy) {
            return Err(format!("--token-file {shown} is {why}, where the sandbox's tools could read it; keep it outside every mount"));
        }
        let token = text.trim();
        if token.is_empty() {
            return Err(format!("--token-file {shown}: the file is empty"));
        }
        Ok(Token { digest: digest(token.as_bytes()), file: real, made: None })
    }

    /// A new random 256-bit token, in a new file of Warden's private folder
    /// (outside every mount, never granted) that only this user may read.
    pub fn generate() -> Result<Token, String> {
        let token: String = crate::elicit::random::<32>()?.iter().map(|b| format!("{b:02x}")).collect();
        // A file of this name is a dead server's with this process's id: its token is no longer served.
        let made = warden_policy::write_private_file("mcp", ".token", &format!("{token}\n"))?;
        Ok(Token { digest: digest(token.as_bytes()), file: made.path.clone(), made: Some(made) })
    }

    /// Whether an `Authorization` header carries the token: the scheme
    /// `Bearer` in any case, then the token. Compared as digests, so the time
    /// taken tells nothing of the token, its length included.
    pub fn admits(&self, header: Option<&HeaderValue>) -> bool {
        let Some(given) = header.and_then(|v| v.to_str().ok()).and_then(bearer) else { return false };
        same(&digest(given.as_bytes()), &self.digest)
    }

    /// What tells two stateless clients apart: a digest of the token they
    /// sent (they hold the same one), never the token itself.
    pub fn client_of(header: Option<&HeaderValue>) -> String {
        let given = header.and_then(|v| v.to_str().ok()).and_then(bearer).unwrap_or_default();
        format!("token:{}", blake3::hash(given.as_bytes()).to_hex())
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        if let Some(made) = self.made.take() {
            made.remove();
        }
    }
}

/// The token of `Bearer TOKEN`, the scheme in any case.
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once([' ', '\t'])?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    *blake3::hash(bytes).as_bytes()
}

/// Compares without returning early.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// Where the policy would let a tool read `file` (canonical), in words; `None` when nowhere.
fn exposed_by(file: &Path, policy: &Policy) -> Option<String> {
    if let Some(mount) = policy.mounts.iter().find(|m| file.starts_with(&m.host_root)) {
        return Some(format!("inside the mount {} (host folder {})", mount.path, mount.host_root.display()));
    }
    let ceilings = std::iter::once(policy.dynamic.as_ref()).chain(policy.workers.values().map(|w| w.dynamic.as_ref())).flatten();
    for dynamic in ceilings {
        let folder = file.parent().unwrap_or(file);
        match &dynamic.within {
            Some(within) => {
                if let Some(ceiling) = within.iter().find(|c| file.starts_with(c)) {
                    return Some(format!("inside the dynamic ceiling {}, which a person may grant", ceiling.display()));
                }
            }
            None if dynamic.allows(folder) => {
                return Some(format!("in {}, which `dynamic: true` lets a person grant", folder.display()));
            }
            None => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(text: &str) -> Token {
        Token { digest: digest(text.as_bytes()), file: PathBuf::new(), made: None }
    }

    #[test]
    fn only_the_whole_token_after_bearer_in_any_case_is_admitted() {
        let t = token("s3cret");
        let admits = |v: &str| t.admits(Some(&HeaderValue::from_str(v).unwrap()));
        for good in ["Bearer s3cret", "bearer s3cret", "BEARER  s3cret", "Bearer s3cret "] {
            assert!(admits(good), "{good}");
        }
        for bad in ["Bearer s3cre", "Bearer s3cret2", "s3cret", "Basic s3cret", "Bearers3cret", "Bearer ", "Bearer S3CRET"] {
            assert!(!admits(bad), "{bad}");
        }
        assert!(!t.admits(None));
    }

    #[test]
    fn digests_compare_whole() {
        assert!(same(&digest(b"a"), &digest(b"a")));
        assert!(!same(&digest(b"a"), &digest(b"b")));
    }
}
