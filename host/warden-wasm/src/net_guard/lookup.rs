//! `wasi:sockets/ip-name-lookup` in front of wasmtime-wasi's: names the list
//! cannot admit are refused unresolved, and each answer is remembered as
//! reached through its name.

use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::p2::{DynPollable, SocketError};
use wasmtime_wasi::p2::bindings::sockets::ip_name_lookup::{Host, HostResolveAddressStream, ResolveAddressStream};
use wasmtime_wasi::p2::bindings::sockets::network::{self, ErrorCode, IpAddress, Network};
use wasmtime_wasi::sockets::WasiSocketsCtxView;

use super::NetGuard;

pub struct GuardedLookup;

impl HasData for GuardedLookup {
    type Data<'a> = GuardedLookupView<'a>;
}

pub struct GuardedLookupView<'a> {
    pub sockets: WasiSocketsCtxView<'a>,
    pub guard: Option<&'a NetGuard>,
}

impl Host for GuardedLookupView<'_> {
    fn resolve_addresses(&mut self, network: Resource<Network>, name: String) -> Result<Resource<ResolveAddressStream>, SocketError> {
        if let Some(guard) = self.guard
            && !guard.may_look_up(&name)
        {
            return Err(ErrorCode::PermanentResolverFailure.into());
        }
        let stream = Host::resolve_addresses(&mut self.sockets, network, name.clone())?;
        if let Some(guard) = self.guard {
            guard.lookup_started(stream.rep(), name);
        }
        Ok(stream)
    }
}

impl HostResolveAddressStream for GuardedLookupView<'_> {
    fn resolve_next_address(&mut self, stream: Resource<ResolveAddressStream>) -> Result<Option<IpAddress>, SocketError> {
        let rep = stream.rep();
        let next = HostResolveAddressStream::resolve_next_address(&mut self.sockets, stream)?;
        if let (Some(guard), Some(address)) = (self.guard, next) {
            guard.lookup_answered(rep, to_std(address));
        }
        Ok(next)
    }

    fn subscribe(&mut self, stream: Resource<ResolveAddressStream>) -> wasmtime::Result<Resource<DynPollable>> {
        HostResolveAddressStream::subscribe(&mut self.sockets, stream)
    }

    fn drop(&mut self, stream: Resource<ResolveAddressStream>) -> wasmtime::Result<()> {
        if let Some(guard) = self.guard {
            guard.lookup_ended(stream.rep());
        }
        HostResolveAddressStream::drop(&mut self.sockets, stream)
    }
}

fn to_std(address: IpAddress) -> std::net::IpAddr {
    match address {
        IpAddress::Ipv4((a, b, c, d)) => std::net::Ipv4Addr::new(a, b, c, d).into(),
        IpAddress::Ipv6((a, b, c, d, e, f, g, h)) => std::net::Ipv6Addr::new(a, b, c, d, e, f, g, h).into(),
    }
}

/// The error conversions `ip-name-lookup` needs, as wasmtime-wasi has them.
impl network::Host for GuardedLookupView<'_> {
    fn convert_error_code(&mut self, error: SocketError) -> wasmtime::Result<ErrorCode> {
        network::Host::convert_error_code(&mut self.sockets, error)
    }

    fn network_error_code(&mut self, error: Resource<wasmtime::Error>) -> wasmtime::Result<Option<ErrorCode>> {
        network::Host::network_error_code(&mut self.sockets, error)
    }
}

impl network::HostNetwork for GuardedLookupView<'_> {
    fn drop(&mut self, this: Resource<Network>) -> wasmtime::Result<()> {
        network::HostNetwork::drop(&mut self.sockets, this)
    }
}
