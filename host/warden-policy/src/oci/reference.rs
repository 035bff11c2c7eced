//! `oci://REGISTRY/REPOSITORY[:TAG][@sha256:HEX]`, parsed strictly: a
//! reference is a part of a URL the puller builds, so nothing it does not
//! expect may pass.

use std::fmt;

/// A reference to a component in a registry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OciRef {
    /// `host` or `host:port`, as written.
    pub registry: String,
    /// Lowercase path components, e.g. `tools/hello`.
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<Digest>,
}

/// A `sha256:` digest: the only algorithm Warden checks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Digest {
    hex: String,
}

impl Digest {
    /// `sha256:` and 64 lowercase hex digits.
    pub fn parse(text: &str) -> Result<Digest, String> {
        let hex = text
            .strip_prefix("sha256:")
            .ok_or_else(|| format!("'{}' is not a sha256 digest; Warden checks only sha256", text.escape_debug()))?;
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return Err(format!("'{}' is not a digest: write sha256: and 64 lowercase hex digits", text.escape_debug()));
        }
        Ok(Digest { hex: hex.to_owned() })
    }

    pub fn of_hex(hex: String) -> Digest {
        debug_assert_eq!(hex.len(), 64);
        Digest { hex }
    }

    pub fn hex(&self) -> &str {
        &self.hex
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.hex)
    }
}

impl OciRef {
    pub fn is_oci(text: &str) -> bool {
        text.starts_with("oci://")
    }

    pub fn parse(text: &str) -> Result<OciRef, String> {
        let bad = |why: &str| format!("'{}' is not an OCI reference: {why}", text.escape_debug());
        let rest = text.strip_prefix("oci://").ok_or_else(|| bad("it must start with oci://"))?;
        let (rest, digest) = match rest.split_once('@') {
            Some((name, digest)) => (name, Some(Digest::parse(digest).map_err(|e| bad(&e))?)),
            None => (rest, None),
        };
        let (registry, path) = rest.split_once('/').ok_or_else(|| bad("write oci://REGISTRY/REPOSITORY"))?;
        check_registry(registry).map_err(|e| bad(&e))?;
        let (repository, tag) = match path.rsplit_once(':') {
            Some((repo, tag)) => (repo, Some(tag)),
            None => (path, None),
        };
        check_repository(repository).map_err(|e| bad(&e))?;
        if let Some(tag) = tag {
            check_tag(tag).map_err(|e| bad(&e))?;
        }
        if tag.is_none() && digest.is_none() {
            return Err(bad("name a tag (:TAG) or a digest (@sha256:...)"));
        }
        Ok(OciRef { registry: registry.to_owned(), repository: repository.to_owned(), tag: tag.map(str::to_owned), digest })
    }

    /// The host without the port, brackets removed.
    pub fn host(&self) -> &str {
        host_of(&self.registry)
    }

    /// This reference with the digest given, the tag kept for the record.
    pub fn pinned(&self, digest: Digest) -> OciRef {
        OciRef { digest: Some(digest), ..self.clone() }
    }

    /// `oci://REGISTRY/REPOSITORY:TAG`, without the digest: the key of a pin.
    pub fn tagged(&self) -> Option<String> {
        self.tag.as_ref().map(|tag| format!("oci://{}/{}:{tag}", self.registry, self.repository))
    }
}

impl fmt::Display for OciRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "oci://{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

pub(crate) fn host_of(registry: &str) -> &str {
    if let Some(inner) = registry.strip_prefix('[') {
        return inner.split_once(']').map_or(inner, |(host, _)| host);
    }
    registry.split_once(':').map_or(registry, |(host, _)| host)
}

/// `host[:port]`: a DNS name, an IPv4 address or a bracketed IPv6 one.
pub fn check_registry(registry: &str) -> Result<(), String> {
    let (host, port) = if let Some(inner) = registry.strip_prefix('[') {
        let (host, after) = inner.split_once(']').ok_or("the registry's IPv6 address lacks its ']'")?;
        host.parse::<std::net::Ipv6Addr>().map_err(|_| format!("'{}' is not an IPv6 address", host.escape_debug()))?;
        let port = match after {
            "" => None,
            after => Some(after.strip_prefix(':').ok_or_else(|| format!("'{}' is not a registry", registry.escape_debug()))?),
        };
        (None, port)
    } else {
        match registry.split_once(':') {
            Some((host, port)) => (Some(host), Some(port)),
            None => (Some(registry), None),
        }
    };
    if let Some(host) = host {
        let label_ok = |l: &str| !l.is_empty() && l.len() <= 63 && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') && !l.starts_with('-');
        if host.is_empty() || host.len() > 253 || !host.split('.').all(label_ok) {
            return Err(format!("'{}' is not a registry host", host.escape_debug()));
        }
    }
    if let Some(port) = port
        && (port.is_empty() || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()) || port.parse::<u16>().map_or(true, |p| p == 0))
    {
        return Err(format!("'{}' is not a port", port.escape_debug()));
    }
    Ok(())
}

/// The distribution spec's name grammar: lowercase components joined by `/`,
/// each `[a-z0-9]+` separated by `.`, `_`, `__` or dashes.
fn check_repository(repository: &str) -> Result<(), String> {
    let component_ok = |c: &str| {
        let bytes = c.as_bytes();
        !c.is_empty()
            && bytes.first().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            && bytes.last().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-'))
            && !c.contains("..")
            && !c.contains("___")
            && !c.contains("._")
            && !c.contains("_.")
    };
    if repository.is_empty() || repository.len() > 255 || !repository.split('/').all(component_ok) {
        return Err(format!(
            "'{}' is not a repository: lowercase letters and digits, separated by '.', '_', '-' or '/'",
            repository.escape_debug()
        ));
    }
    Ok(())
}

fn check_tag(tag: &str) -> Result<(), String> {
    let bytes = tag.as_bytes();
    let ok = !bytes.is_empty()
        && bytes.len() <= 128
        && (bytes[0].is_ascii_alphanumeric() || bytes[0] == b'_')
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok { Ok(()) } else { Err(format!("'{}' is not a tag", tag.escape_debug())) }
}
