//! Reading a tool file: a component, or a preview1 core module wrapped into
//! one with the preview1 adapter, so that one runtime path serves all.

use std::borrow::Cow;
use wasi_preview1_component_adapter_provider::{
    WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_COMMAND_ADAPTER,
    WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
};
use wasmparser::{Parser, Payload};

/// The preview1 adapter for reactors (libraries of exports), which turns a
/// preview1 tool module into a component; `warden new --lang c` ships it.
pub const PREVIEW1_REACTOR_ADAPTER: &[u8] = WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER;

/// Component bytes for `wasm`: unchanged if it is a component already.
pub fn to_component(wasm: &[u8]) -> Result<Cow<'_, [u8]>, String> {
    if Parser::is_component(wasm) {
        return Ok(Cow::Borrowed(wasm));
    }
    if !Parser::is_core_wasm(wasm) {
        return Err("not a WebAssembly component or module".to_owned());
    }
    let adapter = if exports_start(wasm)? {
        WASI_SNAPSHOT_PREVIEW1_COMMAND_ADAPTER
    } else {
        WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER
    };
    wit_component::ComponentEncoder::default()
        .module(wasm)
        .and_then(|e| e.adapter(WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, adapter))
        .and_then(|e| e.validate(true).encode())
        .map(Cow::Owned)
        .map_err(|e| format!("cannot wrap the preview1 module as a component: {e:#}"))
}

/// Whether `wasm` is a component or a core module (by its header).
pub fn is_wasm(wasm: &[u8]) -> bool {
    Parser::is_component(wasm) || Parser::is_core_wasm(wasm)
}

/// What names `wasm`'s compiled form in the cache: a component's own bytes;
/// for a preview1 module, which is wrapped before it is compiled, its bytes
/// and both adapters' (a build with other adapters wraps it otherwise), so
/// that a cached module is neither wrapped nor compiled again.
pub fn cache_identity(wasm: &[u8]) -> Cow<'_, [u8]> {
    if !Parser::is_core_wasm(wasm) {
        return Cow::Borrowed(wasm);
    }
    let mut identity = b"preview1 module wrapped by ".to_vec();
    identity.extend_from_slice(blake3::hash(WASI_SNAPSHOT_PREVIEW1_COMMAND_ADAPTER).as_bytes());
    identity.extend_from_slice(blake3::hash(WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER).as_bytes());
    identity.extend_from_slice(wasm);
    Cow::Owned(identity)
}

/// A preview1 command exports `_start`; a reactor does not.
fn exports_start(wasm: &[u8]) -> Result<bool, String> {
    for payload in Parser::new(0).parse_all(wasm) {
        if let Payload::ExportSection(exports) = payload.map_err(|e| e.to_string())? {
            for export in exports {
                if export.map_err(|e| e.to_string())?.name == "_start" {
                    return Ok(true);
                }
            }
        }
    }
    Ok(false)
}
