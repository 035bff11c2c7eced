//! Under `network: true` a container sits on the engine's bridge, from which
//! the cloud metadata service (169.254.169.254, which hands out the host's
//! credentials) and the host's own addresses (its services, the engine's API
//! on TCP) are a connect away. Warden adds `prohibit` routes for them to the
//! container's network namespace (from a thread that enters it, by netlink),
//! where a command cannot remove them: it holds no capability. A connect
//! there fails at once with "Permission denied". To reach one of them, a
//! policy lists it in a network allowlist instead.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::AsFd;

use crate::error::ShellError;

/// The metadata services of the clouds: AWS, GCP, Azure, OCI and others at
/// 169.254.169.254 (and AWS's IPv6 one), ECS task credentials, Alibaba, and
/// Azure's WireServer (the host agent's endpoint).
const METADATA: &[IpAddr] = &[
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    IpAddr::V4(Ipv4Addr::new(169, 254, 170, 2)),
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    IpAddr::V4(Ipv4Addr::new(168, 63, 129, 16)),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
];

/// Adds the refused routes to the network namespace of the container whose
/// init is `init`, when that is still the namespace `netns` (its cookie).
pub fn refuse(init: u32, netns: u64) -> Result<(), ShellError> {
    let addresses: Vec<IpAddr> = METADATA.iter().copied().chain(host_addresses()).collect();
    let failed = |why: String| {
        ShellError::Engine(format!(
            "under `network: true` Warden keeps a container from the cloud metadata address and the host's own addresses, \
             and could not here ({why}); the command was not run"
        ))
    };
    let namespace = std::fs::File::open(format!("/proc/{init}/ns/net")).map_err(|e| failed(format!("the container's network namespace: {e}")))?;
    let adding = std::thread::Builder::new().name("warden-routes".into()).spawn(move || -> Result<(), String> {
        rustix::thread::move_into_link_name_space(namespace.as_fd(), Some(rustix::thread::LinkNameSpaceType::Network))
            .map_err(|e| format!("entering the container's network namespace: {e}"))?;
        let socket = rustix::net::socket_with(rustix::net::AddressFamily::NETLINK, rustix::net::SocketType::RAW, rustix::net::SocketFlags::CLOEXEC, None)
            .map_err(|e| format!("a netlink socket: {e}"))?;
        if crate::container::runner::netns_cookie(&socket) != netns {
            return Err("the container started again meanwhile".into());
        }
        for (seq, address) in addresses.iter().enumerate() {
            match add_prohibit_route(&socket, *address, seq as u32 + 1) {
                Ok(()) => {}
                // The engine's bridge gives no IPv6 here: nothing is reached over it either.
                Err(_) if address.is_ipv6() => {}
                Err(e) => return Err(format!("the route to {address}: {}", std::io::Error::from_raw_os_error(-e))),
            }
        }
        Ok(())
    });
    adding.map_err(|e| failed(e.to_string()))?.join().map_err(|_| failed("the thread that adds them panicked".into()))?.map_err(failed)
}

/// Sends one RTM_NEWROUTE for a `prohibit` route to `address` alone and reads
/// the kernel's answer: `Err(-errno)` when it refused (an existing route is fine).
fn add_prohibit_route(socket: &impl AsFd, address: IpAddr, seq: u32) -> Result<(), i32> {
    const RTM_NEWROUTE: u16 = 24;
    const NLMSG_ERROR: u16 = 2;
    const NLM_F_REQUEST: u16 = 0x1;
    const NLM_F_ACK: u16 = 0x4;
    const NLM_F_CREATE: u16 = 0x400;
    const RT_TABLE_MAIN: u8 = 254;
    const RTPROT_STATIC: u8 = 4;
    const RTN_PROHIBIT: u8 = 8;
    const RTA_DST: u16 = 1;
    const EEXIST: i32 = 17;
    let (family, octets): (u8, Vec<u8>) = match address {
        IpAddr::V4(a) => (libc::AF_INET as u8, a.octets().to_vec()),
        IpAddr::V6(a) => (libc::AF_INET6 as u8, a.octets().to_vec()),
    };
    let attribute_len = 4 + octets.len();
    let len = 16 + 12 + attribute_len;
    let mut message = Vec::with_capacity(len);
    // nlmsghdr
    message.extend_from_slice(&(len as u32).to_ne_bytes());
    message.extend_from_slice(&RTM_NEWROUTE.to_ne_bytes());
    message.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE).to_ne_bytes());
    message.extend_from_slice(&seq.to_ne_bytes());
    message.extend_from_slice(&0u32.to_ne_bytes());
    // rtmsg: family, dst_len, src_len, tos, table, protocol, scope (universe), type, flags
    message.extend_from_slice(&[family, (octets.len() * 8) as u8, 0, 0, RT_TABLE_MAIN, RTPROT_STATIC, 0, RTN_PROHIBIT]);
    message.extend_from_slice(&0u32.to_ne_bytes());
    // rtattr RTA_DST (4-byte aligned already: 4 or 16 bytes of address)
    message.extend_from_slice(&(attribute_len as u16).to_ne_bytes());
    message.extend_from_slice(&RTA_DST.to_ne_bytes());
    message.extend_from_slice(&octets);
    let kernel = rustix::net::netlink::SocketAddrNetlink::new(0, 0);
    rustix::net::sendto(socket, &message, rustix::net::SendFlags::empty(), &kernel).map_err(|e| -e.raw_os_error())?;
    let mut answer = [0u8; 512];
    let got = rustix::net::recv(socket, &mut answer, rustix::net::RecvFlags::empty()).map_err(|e| -e.raw_os_error())?.0;
    if got < 20 || u16::from_ne_bytes([answer[4], answer[5]]) != NLMSG_ERROR {
        return Err(-libc::EPROTO);
    }
    match i32::from_ne_bytes(answer[16..20].try_into().expect("four bytes")) {
        0 => Ok(()),
        e if e == -EEXIST => Ok(()),
        e => Err(e),
    }
}

/// The host's own addresses, but loopback's (the container has its own):
/// IPv4 from the local routes of /proc/net/fib_trie, IPv6 from /proc/net/if_inet6.
fn host_addresses() -> Vec<IpAddr> {
    let mut found: Vec<IpAddr> = Vec::new();
    let trie = std::fs::read_to_string("/proc/net/fib_trie").unwrap_or_default();
    let mut last: Option<Ipv4Addr> = None;
    for line in trie.lines() {
        let line = line.trim();
        if let Some(address) = line.strip_prefix("|-- ").and_then(|a| a.parse().ok()) {
            last = Some(address);
        } else if line == "/32 host LOCAL"
            && let Some(address) = last
        {
            found.push(IpAddr::V4(address));
        }
    }
    for line in std::fs::read_to_string("/proc/net/if_inet6").unwrap_or_default().lines() {
        let Some(hex) = line.split_whitespace().next().filter(|h| h.len() == 32) else { continue };
        if let Ok(bits) = u128::from_str_radix(hex, 16) {
            found.push(IpAddr::V6(Ipv6Addr::from(bits)));
        }
    }
    found.retain(|a| !a.is_loopback());
    found.sort();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_hosts_own_addresses_are_found_and_loopback_is_not_among_them() {
        let found = super::host_addresses();
        assert!(!found.iter().any(|a| a.is_loopback()), "{found:?}");
        // This machine has an address of its own besides loopback.
        assert!(found.iter().any(|a| a.is_ipv4()), "{found:?}");
    }
}
