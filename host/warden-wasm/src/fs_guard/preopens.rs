//! `wasi:filesystem/preopens`: the guest's directories are the sandbox's own
//! handles, never re-opened by path.

use wasmtime::component::Resource;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::filesystem::preopens;

use super::{GuardedFsView, Origin};

impl preopens::Host for GuardedFsView<'_> {
    fn get_directories(&mut self) -> wasmtime::Result<Vec<(Resource<Descriptor>, String)>> {
        let mut out = Vec::with_capacity(self.guard.preopens.len());
        for (mount, preopen) in self.guard.preopens.iter().enumerate() {
            let fd = self.fs.table.push(Descriptor::Dir(preopen.dir.clone()))?;
            let origin = Origin { mount, vpath: preopen.guest_path.clone().into() };
            self.guard.descriptors.insert(fd.rep(), origin);
            out.push((fd, preopen.guest_path.clone()));
        }
        Ok(out)
    }
}
