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

/// The proxy of one command under Landlock: the command makes a network
/// namespace of its own before its domain is entered and hands its listener
/// over the socket it keeps (`landlock::netns`), which the proxy serves.
pub(crate) struct NamespaceEgress {
    theirs: Option<UnixStream>,
    ours: UnixStream,
    proxy: Proxy,
}

impl NamespaceEgress {
    pub fn start(network: &Network) -> Result<NamespaceEgress, ShellError> {
        let (ours, theirs) = UnixStream::pair()?;
        let receiving = ours.try_clone()?;
        let proxy = Proxy::start(network.clone(), move || warden_net::bridge::receive(&receiving));
        Ok(NamespaceEgress { theirs: Some(theirs), ours, proxy })
    }

    /// The command's end, which its child step uses before exec.
    pub fn theirs(&self) -> RawFd {
        self.theirs.as_ref().map(|t| t.as_raw_fd()).expect("before the spawn")
    }

    pub fn spawned(&mut self) {
        self.theirs = None;
    }

    pub fn finish(mut self) -> Vec<NetRefusal> {
        self.theirs = None;
        let _ = self.ours.shutdown(Shutdown::Both);
        self.proxy.finish()
    }
}

/// The bridge and proxy of one command.
pub(crate) struct Egress {
    /// The sandbox's end, inherited by bwrap; ours is closed after the spawn.
    theirs: Option<UnixStream>,
    ours: UnixStream,
    proxy: Proxy,
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
        let (ours, theirs) = UnixStream::pair()?;
        let mut wrapped = vec![OsString::from(BRIDGE_IN_SANDBOX)];
        wrapped.extend(bridge.args.iter().cloned());
        wrapped.extend(warden_net::bridge::arguments(theirs.as_raw_fd(), command));
        let receiving = ours.try_clone()?;
        let proxy = Proxy::start(network.clone(), move || warden_net::bridge::receive(&receiving));
        Ok(Egress { theirs: Some(theirs), ours, proxy, command: wrapped })
    }

    pub fn program(&self) -> &Path {
        &BRIDGE.get().expect("set before start").program
    }

    /// The descriptor bwrap must pass on to the command.
    pub fn inherited(&self) -> RawFd {
        self.theirs.as_ref().map(|t| t.as_raw_fd()).expect("before the spawn")
    }

    /// The child holds the sandbox's end now.
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
