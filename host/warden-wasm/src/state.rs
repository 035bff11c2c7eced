//! What one store holds: the WASI context, the resource table, the limits,
//! the filesystem guard and the tool's log.

use wasmtime::component::ResourceTable;
use wasmtime_wasi::filesystem::WasiFilesystemCtxView;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::fs_guard::{FsGuard, GuardedFsView};
use crate::limits::MemoryLimiter;
use crate::log::ToolLog;
use crate::net_guard::http::HttpHooks;
use crate::net_guard::lookup::GuardedLookupView;
use crate::net_guard::NetGuard;
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

pub struct ToolState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) guard: FsGuard,
    pub(crate) log: ToolLog,
    /// Under an allowlist: the checks name lookups and sockets go through.
    pub(crate) net: Option<NetGuard>,
    pub(crate) http: WasiHttpCtx,
    pub(crate) http_hooks: HttpHooks,
}

impl WasiHttpView for ToolState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.http_hooks }
    }
}

impl WasiView for ToolState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl ToolState {
    pub(crate) fn guarded_lookup(&mut self) -> GuardedLookupView<'_> {
        let sockets = wasmtime_wasi::sockets::WasiSocketsCtxView { ctx: self.wasi.sockets(), table: &mut self.table };
        GuardedLookupView { sockets, guard: self.net.as_ref() }
    }

    pub(crate) fn guarded_fs(&mut self) -> GuardedFsView<'_> {
        GuardedFsView {
            fs: WasiFilesystemCtxView { ctx: self.wasi.filesystem(), table: &mut self.table },
            guard: &mut self.guard,
        }
    }
}
