//! Addresses a name in the allowlist must not lead to unless they are listed
//! themselves: everything that is not the public internet.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of non-public address `ip` is, or `None` for a public one.
/// IPv4-mapped, IPv4-compatible, NAT64 and 6to4 IPv6 addresses are judged by
/// the IPv4 address inside; Teredo, whose address inside is obfuscated, is
/// not public.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip.to_canonical() {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    Some(match () {
        _ if ip.is_unspecified() || a == 0 => "an unspecified address",
        _ if ip.is_loopback() => "a loopback address",
        _ if ip.is_link_local() => "a link-local address",
        _ if ip.is_private() => "a private address",
        // Shared address space (RFC 6598), where some clouds keep their metadata service.
        _ if a == 100 && (64..128).contains(&b) => "a private address",
        _ if a == 192 && b == 0 && ip.octets()[2] == 0 => "a reserved address",
        _ if a == 198 && (18..20).contains(&b) => "a reserved address",
        _ if ip.is_multicast() => "a multicast address",
        _ if a >= 240 => "a reserved address",
        _ => return None,
    })
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    Some(match () {
        _ if ip.is_unspecified() => "an unspecified address",
        _ if ip.is_loopback() => "a loopback address",
        _ if s[0] & 0xffc0 == 0xfe80 => "a link-local address",
        _ if s[0] & 0xfe00 == 0xfc00 => "a private address",
        // Site-local (fec0::/10), deprecated but still routed by some stacks.
        _ if s[0] & 0xffc0 == 0xfec0 => "a private address",
        // NAT64 for local use (64:ff9b:1::/48, RFC 8215): translated into private networks.
        _ if s[..3] == [0x64, 0xff9b, 1] => "a private address",
        // Teredo (2001::/32) tunnels to an IPv4 address anywhere, the host's own network included.
        _ if s[..2] == [0x2001, 0] => "a reserved address",
        _ if ip.is_multicast() => "a multicast address",
        // IPv4-compatible (::/96, deprecated), NAT64 (64:ff9b::/96) and 6to4
        // (2002::/16) carry an IPv4 address a gateway or tunnel would reach.
        _ if s[..6] == [0; 6] => return non_public_v4(embedded_v4(s[6], s[7])),
        _ if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] => return non_public_v4(embedded_v4(s[6], s[7])),
        _ if s[0] == 0x2002 => return non_public_v4(embedded_v4(s[1], s[2])),
        _ => return None,
    })
}

fn embedded_v4(high: u16, low: u16) -> Ipv4Addr {
    Ipv4Addr::from(((high as u32) << 16) | low as u32)
}

#[cfg(test)]
mod tests {
    use super::non_public;

    fn kind(ip: &str) -> Option<&'static str> {
        non_public(ip.parse().unwrap())
    }

    #[test]
    fn the_metadata_address_is_link_local() {
        assert_eq!(kind("169.254.169.254"), Some("a link-local address"));
        assert_eq!(kind("fe80::1"), Some("a link-local address"));
    }

    #[test]
    fn loopback_private_and_unspecified_in_every_spelling() {
        assert_eq!(kind("127.0.0.1"), Some("a loopback address"));
        assert_eq!(kind("127.255.0.9"), Some("a loopback address"));
        assert_eq!(kind("::1"), Some("a loopback address"));
        assert_eq!(kind("::ffff:127.0.0.1"), Some("a loopback address"));
        assert_eq!(kind("::ffff:169.254.169.254"), Some("a link-local address"));
        assert_eq!(kind("64:ff9b::a9fe:a9fe"), Some("a link-local address"));
        assert_eq!(kind("2002:7f00:1::"), Some("a loopback address"));
        assert_eq!(kind("::a9fe:a9fe"), Some("a link-local address"));
        assert_eq!(kind("::7f00:1"), Some("a loopback address"));
        assert_eq!(kind("::a01:203"), Some("a private address"));
        assert_eq!(kind("2001:0:4136:e378:8000:63bf:3fff:fdd2"), Some("a reserved address"));
        assert_eq!(kind("fec0::1"), Some("a private address"));
        assert_eq!(kind("64:ff9b:1::a9fe:a9fe"), Some("a private address"));
        assert_eq!(kind("10.1.2.3"), Some("a private address"));
        assert_eq!(kind("172.31.0.1"), Some("a private address"));
        assert_eq!(kind("192.168.1.1"), Some("a private address"));
        assert_eq!(kind("100.100.100.200"), Some("a private address"));
        assert_eq!(kind("fd00::1"), Some("a private address"));
        assert_eq!(kind("0.0.0.0"), Some("an unspecified address"));
        assert_eq!(kind("0.1.2.3"), Some("an unspecified address"));
        assert_eq!(kind("::"), Some("an unspecified address"));
        assert_eq!(kind("224.0.0.1"), Some("a multicast address"));
        assert_eq!(kind("255.255.255.255"), Some("a reserved address"));
    }

    #[test]
    fn public_addresses_pass() {
        for ip in ["93.184.215.14", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "64:ff9b::5db8:d70e"] {
            assert_eq!(kind(ip), None, "{ip}");
        }
    }
}
