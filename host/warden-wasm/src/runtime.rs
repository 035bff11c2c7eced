//! One engine, one linker and one compile cache, shared by every run.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use wasmtime::component::{Component, HasSelf, InstancePre, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::cache::{CacheOutcome, CompileCache};
use crate::component::{cache_identity, is_wasm, to_component};
use crate::limits::{MAX_CORE_INSTANCES, MAX_MEMORIES, MAX_TABLES, MAX_TABLE_ELEMENTS};
use crate::error::RunError;
use crate::fs_guard::GuardedFs;
use crate::net_guard::lookup::GuardedLookup;
use crate::state::ToolState;
use crate::tool::bindings;

/// How often the epoch advances; the granularity of wall-time limits.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(5);

#[derive(Debug, Clone)]
pub struct RuntimeOptions {
    /// Where compiled components are kept; `None` compiles every time.
    pub cache_dir: Option<PathBuf>,
    /// Instances that may be alive at once (sizes the pooling allocator).
    pub max_concurrent: u32,
    /// Instances from a pool made up front, for a process that makes many
    /// (a server); else each allocated on demand, for a one-shot command,
    /// which would spend more making the pool (a thousand `mprotect`s) than
    /// it gains from it.
    pub pooled: bool,
}

impl Default for RuntimeOptions {
    fn default() -> RuntimeOptions {
        RuntimeOptions { cache_dir: default_cache_dir(), max_concurrent: 64, pooled: true }
    }
}

/// `$WARDEN_CACHE_DIR`, else `$XDG_CACHE_HOME/warden`, else `~/.cache/warden`.
pub fn default_cache_dir() -> Option<PathBuf> {
    warden_policy::compile_cache_folder()
}

/// What kind of component a file holds, by its exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComponentKind {
    /// `wasi:cli/command`: runs with arguments and stdio.
    Command,
    /// `warden:tool/tool`: `describe` and `call`.
    Tool,
}

/// A component ready to instantiate, once per call.
pub struct Loaded {
    pub kind: ComponentKind,
    pub cache: CacheOutcome,
    pub(crate) pre: InstancePre<ToolState>,
    /// A tool's exports, looked up once here rather than at every call;
    /// `None` for a command, or a tool whose exports do not match the world
    /// (the call then says why).
    pub(crate) tool: Option<bindings::ToolPre<ToolState>>,
}

pub struct Runtime {
    pub(crate) engine: Engine,
    linker: Linker<ToolState>,
    cache: Option<CompileCache>,
    _ticker: EpochTicker,
}

impl Runtime {
    pub fn new(options: RuntimeOptions) -> Result<Runtime, RunError> {
        let engine = engine(options.max_concurrent, options.pooled).map_err(|e| RunError::Instantiate(format!("{e:#}")))?;
        let linker = linker(&engine).map_err(|e| RunError::Instantiate(format!("{e:#}")))?;
        let cache = options.cache_dir.map(|dir| CompileCache::new(dir, &engine));
        let ticker = EpochTicker::start(&engine);
        Ok(Runtime { engine, linker, cache, _ticker: ticker })
    }

    /// Reads, compiles (or loads from the cache) and links the tool at `path`.
    pub fn load_file(&self, path: &Path) -> Result<Loaded, RunError> {
        let load_error = |message: String| RunError::Load { path: path.display().to_string(), message };
        let bytes = std::fs::read(path).map_err(|e| load_error(e.to_string()))?;
        self.load(bytes).map_err(|e| match e {
            RunError::Load { message, .. } => load_error(message),
            other => other,
        })
    }

    /// As [`Runtime::load_file`], from bytes.
    pub fn load(&self, bytes: Vec<u8>) -> Result<Loaded, RunError> {
        let load_error = |message: String| RunError::Load { path: "component".into(), message };
        // Refused before the cache is asked: only a module or a component has an entry there.
        if !is_wasm(&bytes) {
            return Err(load_error("not a WebAssembly component or module".to_owned()));
        }
        let wasm = || to_component(&bytes).map_err(wasmtime::Error::msg);
        let (component, cache) = match &self.cache {
            Some(cache) => cache.load(&self.engine, &cache_identity(&bytes), wasm),
            None => wasm().and_then(|wasm| Component::new(&self.engine, &*wasm)).map(|c| (c, CacheOutcome::Compiled)),
        }
        .map_err(|e| load_error(format!("{e:#}")))?;
        let kind = kind_of(&self.engine, &component);
        let pre = self.linker.instantiate_pre(&component).map_err(|e| RunError::Instantiate(format!("{e:#}")))?;
        let tool = (kind == ComponentKind::Tool).then(|| bindings::ToolPre::new(pre.clone()).ok()).flatten();
        Ok(Loaded { kind, cache, pre, tool })
    }

    pub fn cache_dir(&self) -> Option<&Path> {
        self.cache.as_ref().map(|c| c.dir())
    }
}

fn engine(max_concurrent: u32, pooled: bool) -> wasmtime::Result<Engine> {
    let mut config = Config::new();
    config.wasm_component_model(true).epoch_interruption(true).consume_fuel(true);
    if !pooled {
        return Engine::new(&config);
    }
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(max_concurrent)
        .total_core_instances(max_concurrent * 16)
        .total_memories(max_concurrent * 4)
        .total_tables(max_concurrent * 16)
        .max_memories_per_component(MAX_MEMORIES as u32)
        .max_tables_per_component(MAX_TABLES as u32)
        .max_core_instances_per_component(MAX_CORE_INSTANCES as u32)
        .max_component_instance_size(1 << 20)
        .max_core_instance_size(1 << 20)
        .table_elements(MAX_TABLE_ELEMENTS);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    // Where the address space cannot hold the pool (a low `ulimit -v`),
    // allocate on demand instead: slower, equally safe.
    Engine::new(&config).or_else(|_| {
        config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
        Engine::new(&config)
    })
}

fn linker(engine: &Engine) -> wasmtime::Result<Linker<ToolState>> {
    use wasmtime_wasi::p2::bindings::{filesystem::preopens, sockets::ip_name_lookup, sync::filesystem::types};
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    // The filesystem goes through Warden's guard instead of straight to wasmtime-wasi.
    linker.allow_shadowing(true);
    types::add_to_linker::<ToolState, GuardedFs>(&mut linker, ToolState::guarded_fs)?;
    preopens::add_to_linker::<ToolState, GuardedFs>(&mut linker, ToolState::guarded_fs)?;
    // Name lookups go through the network guard.
    ip_name_lookup::add_to_linker::<ToolState, GuardedLookup>(&mut linker, ToolState::guarded_lookup)?;
    linker.allow_shadowing(false);
    wasmtime_wasi_http::p2::add_only_http_to_linker_sync(&mut linker)?;
    bindings::warden::tool::host::add_to_linker::<ToolState, HasSelf<ToolState>>(&mut linker, |s| s)?;
    Ok(linker)
}

fn kind_of(engine: &Engine, component: &Component) -> ComponentKind {
    let ty = component.component_type();
    let mut names = ty.exports(engine).map(|(name, _)| name);
    if names.any(|n| n == "call") { ComponentKind::Tool } else { ComponentKind::Command }
}

/// Advances the engine's epoch every [`EPOCH_TICK`] while the runtime lives.
struct EpochTicker {
    stop: Arc<AtomicBool>,
}

impl EpochTicker {
    fn start(engine: &Engine) -> EpochTicker {
        let stop = Arc::new(AtomicBool::new(false));
        let (engine, flag) = (engine.clone(), stop.clone());
        std::thread::Builder::new()
            .name("warden-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })
            .expect("a thread for the epoch ticker");
        EpochTicker { stop }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
