//! One run or call: a fresh store built from a [`RunConfig`], and what comes out of it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use wasmtime::{Store, UpdateDeadline};
use wasmtime::component::ResourceTable;
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::p2::pipe::MemoryInputPipe;
use warden_fs::Denial;
use warden_policy::Network;
use wasmtime_wasi_http::WasiHttpCtx;

use crate::deterministic::make_deterministic;
use crate::error::{classify, Cancelled, HitLimits, RunError};
use crate::fs_guard::{FsGuard, GuardedPreopen, SandboxLists};
use crate::limits::{MemoryLimiter, RunLimits};
use crate::log::{LogLine, ToolLog};
use crate::net_guard::http::HttpHooks;
use crate::net_guard::NetGuard;
use crate::output::{CappedOutput, Sink};
use crate::runtime::{Runtime, EPOCH_TICK};
use crate::state::ToolState;

/// What the guest gets on stdin.
#[derive(Debug, Clone, Default)]
pub enum Stdin {
    #[default]
    Empty,
    /// The host process's stdin.
    Inherit,
    Bytes(Vec<u8>),
}

/// Everything a run depends on besides the component.
#[derive(Clone)]
pub struct RunConfig {
    pub preopens: Vec<GuardedPreopen>,
    pub lists: SandboxLists,
    /// `argv`, program name first.
    pub args: Vec<String>,
    /// The guest's only environment variables.
    pub env: Vec<(String, String)>,
    pub limits: RunLimits,
    /// `Some(seed)` for a deterministic run.
    pub deterministic: Option<u64>,
    pub network: Network,
    pub stdin: Stdin,
    pub stdout: Sink,
    pub stderr: Sink,
    /// Set to stop the run from another thread (within one epoch tick):
    /// it ends with [`RunError::Cancelled`](crate::RunError::Cancelled).
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Default for RunConfig {
    fn default() -> RunConfig {
        RunConfig {
            preopens: Vec::new(),
            lists: SandboxLists::default(),
            args: vec!["tool".into()],
            env: Vec::new(),
            limits: RunLimits::default(),
            deterministic: None,
            network: Network::Off,
            stdin: Stdin::Empty,
            stdout: Sink::Capture,
            stderr: Sink::Capture,
            cancel: None,
        }
    }
}

/// What a finished run leaves besides its result.
#[derive(Debug, Default)]
pub struct RunReport {
    /// Captured output; empty for a stream passed through.
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub fuel_consumed: u64,
    /// Accesses the sandbox refused, worded for the model.
    pub denials: Vec<Denial>,
    pub logs: Vec<LogLine>,
}

pub(crate) struct Session {
    pub store: Store<ToolState>,
    stdout: CappedOutput,
    stderr: CappedOutput,
    initial_fuel: u64,
    hit: HitLimits,
}

impl Session {
    pub fn new(runtime: &Runtime, config: &RunConfig) -> Session {
        let limits = config.limits;
        let mut wasi = WasiCtxBuilder::new();
        wasi.args(&config.args).envs(&config.env).allow_blocking_current_thread(true);
        match &config.stdin {
            Stdin::Empty => {}
            Stdin::Inherit => {
                wasi.inherit_stdin();
            }
            Stdin::Bytes(bytes) => {
                wasi.stdin(MemoryInputPipe::new(bytes.clone()));
            }
        }
        let stdout = CappedOutput::new("stdout", config.stdout, limits.output_bytes);
        let stderr = CappedOutput::new("stderr", config.stderr, limits.output_bytes);
        wasi.stdout(stdout.clone()).stderr(stderr.clone());
        let guard = FsGuard::new(config.preopens.clone(), config.lists.clone());
        // Every runtime network decision, `network: true` included, goes through one guard.
        let net = NetGuard::new(config.network.clone(), guard.denial_log());
        match &config.network {
            Network::Off => {
                wasi.allow_ip_name_lookup(false).allow_tcp(false).allow_udp(false);
            }
            Network::Full => {
                wasi.inherit_network().allow_ip_name_lookup(true).allow_tcp(true).allow_udp(true);
            }
            Network::Allow(_) => {
                let check = net.clone();
                wasi.allow_ip_name_lookup(true).allow_tcp(true).allow_udp(true).socket_addr_check(move |addr, used_for| {
                    let permitted = check.permits(addr, used_for);
                    Box::pin(async move { permitted })
                });
            }
        }
        if let Some(seed) = config.deterministic {
            make_deterministic(&mut wasi, seed);
        }
        let state = ToolState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            limiter: MemoryLimiter::new(limits.memory_bytes),
            guard,
            log: ToolLog::new(limits.output_bytes),
            net: matches!(config.network, Network::Allow(_)).then(|| net.clone()),
            http: WasiHttpCtx::new(),
            http_hooks: HttpHooks { guard: net },
        };
        let mut store = Store::new(&runtime.engine, state);
        store.limiter(|s| &mut s.limiter);
        let initial_fuel = limits.fuel.unwrap_or(u64::MAX);
        store.set_fuel(initial_fuel).expect("the engine counts fuel");
        let ticks = match limits.timeout {
            Some(t) => (t.as_micros() / EPOCH_TICK.as_micros()).max(1) as u64 + 1,
            // Far beyond any run, and safe to add to the current epoch.
            None => u64::MAX / 2,
        };
        match &config.cancel {
            None => {
                store.set_epoch_deadline(ticks);
                store.epoch_deadline_trap();
            }
            // Every tick, look at the flag, then at the time left.
            Some(cancel) => {
                let (cancel, mut left) = (cancel.clone(), ticks);
                store.set_epoch_deadline(1);
                store.epoch_deadline_callback(move |_| {
                    left = left.saturating_sub(1);
                    if cancel.load(Ordering::Relaxed) {
                        Err(Cancelled.into())
                    } else if left == 0 {
                        Ok(UpdateDeadline::Interrupt)
                    } else {
                        Ok(UpdateDeadline::Continue(1))
                    }
                });
            }
        }
        Session { store, stdout, stderr, initial_fuel, hit: HitLimits { timeout: limits.timeout, fuel: limits.fuel } }
    }

    pub fn classify(&self, err: wasmtime::Error) -> RunError {
        classify(err, self.hit)
    }

    /// The refusals so far: what a run that ended in an error still met.
    pub fn denials(&self) -> Vec<warden_fs::Denial> {
        self.store.data().guard.denials()
    }

    pub fn finish(mut self) -> RunReport {
        let fuel_left = self.store.get_fuel().unwrap_or(0);
        let state = self.store.data_mut();
        RunReport {
            stdout: self.stdout.captured(),
            stderr: self.stderr.captured(),
            fuel_consumed: self.initial_fuel - fuel_left,
            denials: state.guard.denials(),
            logs: std::mem::take(&mut state.log.lines),
        }
    }
}
