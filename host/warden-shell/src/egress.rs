//! A command's way out under a network allowlist (bubblewrap): the bridge
//! wrapped around the command, the Unix socket it inherits, and the proxy
//! serving the listener the bridge sends back (see `warden_net::bridge`).

use std::ffi::OsString;
use std::net::Shutdown;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use warden_net::Proxy;
use warden_policy::{NetRefusal, Network};

use crate::error::ShellError;

/// Where the bridge program appears inside the sandbox.
pub const BRIDGE_IN_SANDBOX: &str = "/tmp/.warden-net-bridge";

struct NetBridge {
    program: PathBuf,
    args: Vec<OsString>,
}

static BRIDGE: OnceLock<NetBridge> = OnceLock::new();

/// Names the program that runs `warden_net::bridge::main` with the arguments
/// after `args` (the `warden` binary: `warden __net-bridge`). Needed once per
/// process before a command runs under a network allowlist; later calls are ignored.
pub fn set_net_bridge(program: PathBuf, args: Vec<OsString>) {
    let _ = BRIDGE.set(NetBridge { program, args });
}

/// One command's way to Warden's proxy: a socket pair, whose command end
/// the command (or its bridge) keeps to send back the listener the proxy
/// serves. Under Landlock the command makes that listener itself, in a
/// network namespace of its own, before its domain is entered (`landlock::netns`).
pub(crate) struct ProxyChannel {
    theirs: Option<UnixStream>,
    ours: UnixStream,
    proxy: Proxy,
}

impl ProxyChannel {
    pub fn start(network: &Network) -> Result<ProxyChannel, ShellError> {
        let (ours, theirs) = UnixStream::pair()?;
        let receiving = ours.try_clone()?;
        let proxy = Proxy::start(network.clone(), move || warden_net::bridge::receive(&receiving));
        Ok(ProxyChannel { theirs: Some(theirs), ours, proxy })
    }

    /// The command's end, which it must inherit (or use before exec).
    pub fn theirs(&self) -> RawFd {
        self.theirs.as_ref().map(|t| t.as_raw_fd()).expect("before the spawn")
    }

    /// The child holds the command's end now.
    pub fn spawned(&mut self) {
        self.theirs = None;
    }

    /// After the command: stop serving, and what was refused.
    pub fn finish(mut self) -> Vec<NetRefusal> {
        self.theirs = None;
        // Unblocks a receive still waiting for a bridge that never ran.
        let _ = self.ours.shutdown(Shutdown::Both);
        self.proxy.finish()
    }
}

/// The bridge and proxy of one command under bubblewrap.
pub(crate) struct Egress {
    pub channel: ProxyChannel,
    /// The command, wrapped in the bridge.
    pub command: Vec<OsString>,
}

impl Egress {
    pub fn start(network: &Network, command: &[OsString]) -> Result<Egress, ShellError> {
        let bridge = BRIDGE.get().ok_or_else(|| {
            ShellError::Policy(
                "a network allowlist needs Warden's network bridge, and this host program did not name one \
                 (warden_shell::set_net_bridge); the command was not run"
                    .into(),
            )
        })?;
        let channel = ProxyChannel::start(network)?;
        let mut wrapped = vec![OsString::from(BRIDGE_IN_SANDBOX)];
        wrapped.extend(bridge.args.iter().cloned());
        wrapped.extend(warden_net::bridge::arguments(channel.theirs(), command));
        Ok(Egress { channel, command: wrapped })
    }

    /// The bridge program, bound into the sandbox (named before any start).
    pub fn program() -> &'static Path {
        &BRIDGE.get().expect("set before start").program
    }
}
