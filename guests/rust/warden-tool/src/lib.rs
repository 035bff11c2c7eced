//! Writing Warden tools in Rust: declare tools, read and write files with
//! `std::fs` (the sandbox's mounts are the preopens), and every error, or a
//! panic, becomes a `tool-error` rather than a trap.
//!
//! ```ignore
//! use serde::Deserialize;
//! use warden_tool::{Error, PathContext, Tool};
//!
//! #[derive(Deserialize)]
//! struct Shout { path: String }
//!
//! fn shout(args: Shout) -> Result<String, Error> {
//!     Ok(std::fs::read_to_string(&args.path).at(&args.path)?.to_uppercase())
//! }
//!
//! fn tools() -> Vec<Tool> {
//!     vec![Tool::new("shout", "Upper-case a file.", r#"{"type":"object","required":["path"],
//!         "properties":{"path":{"type":"string"}}}"#, shout)]
//! }
//!
//! warden_tool::export_tools!(tools);
//! ```
//!
//! A tool takes its input as any `serde::Deserialize` type and returns a
//! `String` or a `serde_json::Value`. Errors map to the `tool-error` the host
//! shows the model: [`Error::InvalidInput`] for input that makes no sense
//! (the input is checked against the schema's `required` list, then parsed),
//! [`Error::Denied`] for a path the sandbox refused (`ENOTCAPABLE`, `EACCES`,
//! `EPERM`, `EROFS`, `EFBIG`, or a path under no mount), [`Error::Failed`]
//! for anything else, a panic included when the tool is built with unwinding
//! (see guests/README.md).

#![cfg_attr(all(panic = "unwind", target_family = "wasm"), feature(asm_experimental_arch))]

mod errors;
mod input;

use std::collections::BTreeMap;

pub use errors::{Error, PathContext};
pub use serde_json::{json, Value};

/// The bindings of the `warden:tool` world (with WASI's interfaces).
pub mod bindings {
    wit_bindgen::generate!({
        world: "tool",
        path: "../wit",
        generate_all,
        pub_export_macro: true,
        export_macro_name: "export_world",
        default_bindings_module: "warden_tool::bindings",
    });
}

use bindings::warden::tool::host;

// The tag LLVM's WebAssembly exceptions throw and catch (panics unwinding):
// wasi-libc does not define it, as a C++ runtime would.
#[cfg(all(panic = "unwind", target_family = "wasm"))]
core::arch::global_asm!(".globl __cpp_exception", ".tagtype __cpp_exception i32", "__cpp_exception:");

/// How much a log line matters.
pub use host::Level;

/// Adds a line to the host's log for this call. Never shown to the tool.
pub fn log(level: Level, message: &str) {
    host::log(level, message);
}

type Run = Box<dyn Fn(Value) -> Result<String, Error>>;

/// One tool of the component: its name, what it does, its input's JSON
/// Schema, and the function that runs it.
pub struct Tool {
    name: String,
    description: String,
    schema: String,
    run: Run,
}

/// What a tool may return: text as it is, a JSON value as JSON text.
pub trait Output {
    fn into_text(self) -> String;
}

impl Output for String {
    fn into_text(self) -> String {
        self
    }
}

impl Output for Value {
    fn into_text(self) -> String {
        self.to_string()
    }
}

impl Tool {
    /// `input_schema` is the JSON Schema of the input object, as JSON text.
    pub fn new<I, O>(name: &str, description: &str, input_schema: &str, run: fn(I) -> Result<O, Error>) -> Tool
    where
        I: serde::de::DeserializeOwned + 'static,
        O: Output + 'static,
    {
        let required: Vec<String> = serde_json::from_str::<Value>(input_schema)
            .ok()
            .and_then(|schema| serde_json::from_value(schema.get("required")?.clone()).ok())
            .unwrap_or_default();
        Tool {
            name: name.to_owned(),
            description: description.to_owned(),
            schema: input_schema.to_owned(),
            run: Box::new(move |input| Ok(run(input::parse(input, &required)?)?.into_text())),
        }
    }
}

/// The tools of one component, by name.
pub struct Toolbox {
    tools: BTreeMap<String, Tool>,
}

impl Toolbox {
    pub fn new(tools: Vec<Tool>) -> Toolbox {
        Toolbox { tools: tools.into_iter().map(|tool| (tool.name.clone(), tool)).collect() }
    }

    pub fn describe(&self) -> Vec<bindings::ToolInfo> {
        let info = |t: &Tool| bindings::ToolInfo { name: t.name.clone(), description: t.description.clone(), input_schema: t.schema.clone() };
        self.tools.values().map(info).collect()
    }

    /// Runs tool `name` on `input`; a panic in it is a `failed` error.
    pub fn call(&self, name: &str, input: &str) -> Result<String, bindings::ToolError> {
        let Some(tool) = self.tools.get(name) else {
            let offered: Vec<&str> = self.tools.keys().map(String::as_str).collect();
            return Err(Error::InvalidInput(format!("no tool named '{name}'; this component offers: {}", offered.join(", "))).into());
        };
        let input = input::object(input)?;
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (tool.run)(input)));
        match ran {
            Ok(result) => result.map_err(Into::into),
            Err(panic) => Err(Error::Failed(errors::panic_message(&*panic)).into()),
        }
    }
}

/// Exports the tools that `$tools()` returns (a `fn() -> Vec<Tool>`) as the
/// component's `describe` and `call`.
#[macro_export]
macro_rules! export_tools {
    ($tools:path) => {
        struct WardenTools;

        impl $crate::bindings::Guest for WardenTools {
            fn describe() -> ::std::vec::Vec<$crate::bindings::ToolInfo> {
                $crate::Toolbox::new($tools()).describe()
            }

            fn call(name: ::std::string::String, input: ::std::string::String) -> ::std::result::Result<::std::string::String, $crate::bindings::ToolError> {
                $crate::call_exported($tools, &name, &input)
            }
        }

        $crate::bindings::export_world!(WardenTools with_types_in $crate::bindings);
    };
}

/// The exported `call`: the toolbox made and tool `name` run, a panic in
/// either (in `tools()` too) a `failed` error.
#[doc(hidden)]
pub fn call_exported(tools: fn() -> Vec<Tool>, name: &str, input: &str) -> Result<String, bindings::ToolError> {
    install_panic_hook();
    let ran = std::panic::catch_unwind(|| Toolbox::new(tools()).call(name, input));
    ran.unwrap_or_else(|panic| Err(Error::Failed(errors::panic_message(&*panic)).into()))
}

/// Installs, once, a panic hook that puts the panic in the host's log
/// instead of the guest's stderr: the tool's result carries it too.
#[doc(hidden)]
pub fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            errors::remember_panic(info);
            log(Level::Error, &format!("panic: {info}"));
        }));
    });
}
