//! `registries:` of a policy: how each registry is reached.

/// From `registries."HOST:PORT"`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegistrySettings {
    /// Plain HTTP; only ever for a loopback registry.
    pub insecure: bool,
}

/// `localhost`, `127.0.0.0/8` or `::1`: the only hosts plain HTTP may reach.
pub fn is_loopback_host(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}
