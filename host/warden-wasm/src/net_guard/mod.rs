//! The network a guest sees under an allowlist.
//!
//! - `wasi:sockets`: every address a socket connects to, sends to or receives
//!   from is checked by wasmtime-wasi's address check against the policy's
//!   [`Network`]. An address counts as reached through a name when the guest
//!   looked that name up here ([`lookup`]), so a listed name must lead to an
//!   address the list admits for it (never a private one of its own accord).
//! - name lookup: only names the list could admit are resolved at all.
//! - `wasi:http`: [`http`] dials through `warden_net`, the same checks.
//!
//! Every refusal is logged as a [`Denial`], so a tool's failure reads in the
//! sandbox's words.

pub mod http;
pub mod lookup;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use warden_fs::Denial;
use warden_policy::{Host, Network, Target};
use wasmtime_wasi::sockets::SocketAddrUse;

use crate::fs_guard::DenialLog;

#[derive(Clone)]
pub struct NetGuard(Arc<Inner>);

struct Inner {
    network: Network,
    /// Address → the names the guest looked up that gave it.
    resolved: Mutex<HashMap<IpAddr, Vec<String>>>,
    /// Name lookup stream (resource rep) → the name asked.
    lookups: Mutex<HashMap<u32, String>>,
    denials: DenialLog,
}

impl NetGuard {
    pub(crate) fn new(network: Network, denials: DenialLog) -> NetGuard {
        NetGuard(Arc::new(Inner { network, resolved: Mutex::default(), lookups: Mutex::default(), denials }))
    }

    pub fn network(&self) -> &Network {
        &self.0.network
    }

    pub(crate) fn record(&self, denial: Denial) {
        self.0.denials.record(denial);
    }

    /// wasmtime-wasi's address check.
    pub fn permits(&self, addr: SocketAddr, used_for: SocketAddrUse) -> bool {
        let network = &self.0.network;
        let decision = match used_for {
            // An implicit bind before a connect or send uses port 0.
            SocketAddrUse::TcpBind | SocketAddrUse::UdpBind if addr.port() == 0 || network.allows_listen() => Ok(()),
            SocketAddrUse::TcpBind | SocketAddrUse::UdpBind | SocketAddrUse::TcpListen | SocketAddrUse::TcpAccept => {
                if network.allows_listen() { Ok(()) } else { Err(network.listen_refused(addr)) }
            }
            SocketAddrUse::TcpConnect | SocketAddrUse::UdpSend => self.check_remote(addr),
            // Datagrams from elsewhere are dropped without a note: the guest asked for nothing.
            SocketAddrUse::UdpReceive => return self.check_remote(addr).is_ok(),
        };
        decision.map_err(|refusal| self.record(Denial::Network(refusal))).is_ok()
    }

    /// Admitted through a name the guest resolved to it, or as an address.
    fn check_remote(&self, addr: SocketAddr) -> Result<(), warden_policy::NetRefusal> {
        let ip = addr.ip().to_canonical();
        let names = self.0.resolved.lock().unwrap().get(&ip).cloned().unwrap_or_default();
        let mut first = None;
        for name in &names {
            match self.0.network.check_address(Some(name), addr) {
                Ok(()) => return Ok(()),
                Err(refusal) => drop(first.get_or_insert(refusal)),
            }
        }
        match self.0.network.check_address(None, addr) {
            Ok(()) => Ok(()),
            Err(refusal) => Err(first.unwrap_or(refusal)),
        }
    }

    /// Whether `name` may be resolved; a refusal is logged.
    fn may_look_up(&self, name: &str) -> bool {
        let network = &self.0.network;
        let refusal = match Host::parse(name) {
            Ok(host) if network.may_look_up(&host) => return true,
            Ok(host) => network.check_target(&Target { host, port: 0 }).err(),
            Err(why) => Some(network.malformed(name, why)),
        };
        if let Some(mut refusal) = refusal {
            // No port is known yet: name the host alone.
            refusal.target = refusal.target.trim_end_matches(":0").to_owned();
            self.record(Denial::Network(refusal));
        }
        false
    }

    /// Remembered as the allowlist reads names (lowercase, no trailing dot),
    /// so that the connect to the address is judged by the name looked up.
    fn lookup_started(&self, rep: u32, name: String) {
        let name = match Host::parse(&name) {
            Ok(Host::Name(normal)) => normal,
            _ => name,
        };
        self.0.lookups.lock().unwrap().insert(rep, name);
    }

    fn lookup_answered(&self, rep: u32, ip: IpAddr) {
        if let Some(name) = self.0.lookups.lock().unwrap().get(&rep) {
            let mut resolved = self.0.resolved.lock().unwrap();
            let names = resolved.entry(ip.to_canonical()).or_default();
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }

    fn lookup_ended(&self, rep: u32) {
        self.0.lookups.lock().unwrap().remove(&rep);
    }
}
