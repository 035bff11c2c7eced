//! What one store holds: the WASI context, the resource table, the limits,
//! the filesystem guard and the tool's log.

use wasmtime::component::ResourceTable;
use wasmtime_wasi::filesystem::WasiFilesystemCtxView;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::fs_guard::{FsGuard, GuardedFsView};
use crate::limits::MemoryLimiter;
use crate::log::ToolLog;

pub struct ToolState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) guard: FsGuard,
    pub(crate) log: ToolLog,
}

impl WasiView for ToolState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl ToolState {
    pub(crate) fn guarded_fs(&mut self) -> GuardedFsView<'_> {
        GuardedFsView {
            fs: WasiFilesystemCtxView { ctx: self.wasi.filesystem(), table: &mut self.table },
            guard: &mut self.guard,
        }
    }
}
