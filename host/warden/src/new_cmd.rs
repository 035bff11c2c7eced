//! `warden new`: a ready-to-build tool project in C, Python, JavaScript, Rust or WAT.
//!
//! The files are templates in `host/warden/templates/`, plus the pieces the
//! repository's own guests use (the support libraries, the WIT, the toolchain
//! versions), so that a new project builds exactly as `guests/build.sh` does.

use std::path::Path;

use crate::exit::Failure;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    C,
    Python,
    Js,
    Rust,
    Wat,
}

/// A file of a new project: its path in the project and its contents, with
/// `{{placeholders}}` still in them when it is text.
struct File {
    path: &'static str,
    contents: &'static [u8],
}

macro_rules! template {
    ($path:literal, $source:literal) => {
        File { path: $path, contents: include_bytes!(concat!("../templates/", $source)) }
    };
}

macro_rules! repo_file {
    ($path:literal, $source:literal) => {
        File { path: $path, contents: include_bytes!(concat!("../../../", $source)) }
    };
}

const COMMON: &[File] = &[
    template!("policy.yaml", "common/policy.yaml"),
    template!("data/hello.md", "common/hello.md"),
    template!("out/README.md", "common/out.md"),
    template!("test.sh", "common/test.sh"),
    template!("README.md", "common/README.md"),
    template!(".gitignore", "common/gitignore"),
    repo_file!("wit/tool.wit", "wit/tool.wit"),
    repo_file!("wit/deps/cli/cli.wit", "wit/deps/cli/cli.wit"),
    repo_file!("wit/deps/clocks/clocks.wit", "wit/deps/clocks/clocks.wit"),
    repo_file!("wit/deps/filesystem/filesystem.wit", "wit/deps/filesystem/filesystem.wit"),
    repo_file!("wit/deps/http/http.wit", "wit/deps/http/http.wit"),
    repo_file!("wit/deps/io/io.wit", "wit/deps/io/io.wit"),
    repo_file!("wit/deps/random/random.wit", "wit/deps/random/random.wit"),
    repo_file!("wit/deps/sockets/sockets.wit", "wit/deps/sockets/sockets.wit"),
];

/// What differs between languages.
struct Language {
    title: &'static str,
    source: &'static str,
    toolchain: &'static str,
    files: &'static [File],
    /// README rows for `files` beyond the source.
    file_rows: &'static str,
    checks: Checks,
}

/// What test.sh checks: the first input and its exact output, then more
/// `expect STATUS OUTPUT INPUT` lines.
struct Checks {
    input: &'static str,
    output: &'static str,
    more: &'static str,
}

/// The minimal tool of C, Python, JavaScript and Rust counts a file's lines and words.
const COUNT: Checks = Checks {
    input: r#"{"path":"/data/hello.md"}"#,
    output: "/data/hello.md: 2 lines, 8 words",
    more: r#"# A path under no mount is refused in the sandbox's words, with exit status 3.
expect 3 "Cannot access '/etc/passwd': path is outside sandbox.
Readable paths: /data, /out" '{"path":"/etc/passwd"}'
expect 1 "invalid input: missing field 'path'" '{}'"#,
};

/// The WAT tool echoes its input.
const ECHO: Checks = Checks { input: r#"{"say":"hello"}"#, output: r#"{"say":"hello"}"#, more: "expect 0 '{}' '{}'" };

fn language(lang: Lang) -> Language {
    match lang {
        Lang::C => Language {
            title: "C",
            source: "tool.c",
            toolchain: "Zig and wasm-tools (PyPI) and wit-bindgen (cargo install)",
            files: &[
                template!("tool.c", "c/tool.c"),
                template!("build.sh", "c/build.sh"),
                repo_file!("include/tool_support.h", "guests/c/common/tool_support.h"),
                repo_file!("include/json.h", "guests/c/common/json.h"),
                File { path: "adapter/wasi_snapshot_preview1.reactor.wasm", contents: warden_wasm::PREVIEW1_REACTOR_ADAPTER },
            ],
            file_rows: "| `include/` | helpers: describing tools, errno to `tool-error`, reading JSON input |\n\
                        | `adapter/` | the WASI preview1 adapter that makes the compiled module a component |\n",
            checks: COUNT,
        },
        Lang::Python => Language {
            title: "Python",
            source: "app.py",
            toolchain: "componentize-py (PyPI)",
            files: &[
                template!("app.py", "python/app.py"),
                template!("build.sh", "python/build.sh"),
                repo_file!("warden_tool.py", "guests/python/warden_tool.py"),
            ],
            file_rows: "| `warden_tool.py` | declares tools; turns every exception into a `tool-error` |\n",
            checks: COUNT,
        },
        Lang::Js => Language {
            title: "JavaScript",
            source: "app.js",
            toolchain: "componentize-js (npm)",
            files: &[
                template!("app.js", "js/app.js"),
                template!("build.sh", "js/build.sh"),
                repo_file!("warden_tool.js", "guests/js/warden_tool.js"),
            ],
            file_rows: "| `warden_tool.js` | declares tools; files through the sandbox (`fs`); turns every throw into a `tool-error` |\n",
            checks: COUNT,
        },
        Lang::Rust => Language {
            title: "Rust",
            source: "src/lib.rs",
            toolchain: "Debian's rustc-web (where rustup has no wasm32-wasip1 target) and wasm-tools (PyPI)",
            files: &[
                template!("src/lib.rs", "rust/lib.rs"),
                template!("Cargo.toml", "rust/Cargo.toml"),
                repo_file!("Cargo.lock", "guests/rust/Cargo.lock"),
                template!("build.sh", "rust/build.sh"),
                repo_file!("wasi-toolchain.sh", "guests/rust/toolchain.sh"),
                repo_file!("warden-tool/Cargo.toml", "guests/rust/warden-tool/Cargo.toml"),
                repo_file!("warden-tool/src/lib.rs", "guests/rust/warden-tool/src/lib.rs"),
                repo_file!("warden-tool/src/errors.rs", "guests/rust/warden-tool/src/errors.rs"),
                repo_file!("warden-tool/src/input.rs", "guests/rust/warden-tool/src/input.rs"),
                File { path: "adapter/wasi_snapshot_preview1.reactor.wasm", contents: warden_wasm::PREVIEW1_REACTOR_ADAPTER },
            ],
            file_rows: "| `Cargo.toml` | the crate: a `cdylib` for wasm32-wasip1 |\n\
                        | `Cargo.lock` | the versions Warden's own Rust tools are built and tested with (cargo drops what this crate does not use) |\n\
                        | `warden-tool/` | the support crate: declares tools, parses typed input, turns every error into a `tool-error`, and a panic too where std unwinds (the Debian route; rustup's std aborts, and the tool traps) |\n\
                        | `wasi-toolchain.sh` | finds rustup's wasm32-wasip1 target, or unpacks Debian's rustc-web where there is none |\n\
                        | `adapter/` | the WASI preview1 adapter that makes the compiled module a component |\n",
            checks: COUNT,
        },
        Lang::Wat => Language {
            title: "WebAssembly text",
            source: "tool.wat",
            toolchain: "wasm-tools (PyPI)",
            files: &[template!("tool.wat", "wat/tool.wat"), template!("build.sh", "wat/build.sh")],
            file_rows: "",
            checks: ECHO,
        },
    }
}

/// Longest tool name: the WAT template keeps 32 bytes for it.
const MAX_NAME: usize = 32;

/// The tool's name is the folder's: a lowercase letter, then lowercase
/// letters, digits, `-` and `_`.
fn tool_name(dir: &Path) -> Result<String, Failure> {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let valid = name.len() <= MAX_NAME
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !valid {
        return Err(Failure::usage(format!(
            "cannot name a tool '{name}': use a lowercase letter, then lowercase letters, digits, '-' or '_' \
             (at most {MAX_NAME} characters); the folder's name is the tool's"
        )));
    }
    Ok(name.to_owned())
}

fn fill(text: &str, values: &[(&str, &str)]) -> String {
    values.iter().fold(text.to_owned(), |text, (key, value)| text.replace(&format!("{{{{{key}}}}}"), value))
}

pub fn run(lang: Lang, dir: &Path) -> Result<(), Failure> {
    let name = tool_name(dir)?;
    if dir.exists() {
        return Err(Failure::usage(format!("{} already exists; give a new folder", dir.display())));
    }
    let language = language(lang);
    let lang_name = clap::ValueEnum::to_possible_value(&lang).expect("every language has a name").get_name().to_owned();
    let name_len = format!("\\{:02x}\\00\\00\\00", name.len());
    let prologue = fill(include_str!("../templates/common/build_prologue.sh"), &[(
        "versions",
        include_str!("../../../guests/toolchain.env"),
    )]);
    let values = [
        ("prologue", prologue.trim_end()),
        ("checks", language.checks.more),
        ("files", language.file_rows),
        ("expected_input", language.checks.input),
        ("expected_output", language.checks.output),
        ("name_len", &name_len),
        ("name_bytes", &name.len().to_string()),
        ("language", language.title),
        ("lang", &lang_name),
        ("source", language.source),
        ("toolchain", language.toolchain),
        ("crate", &name.replace('-', "_")),
        ("name", &name),
    ];
    for file in COMMON.iter().chain(language.files) {
        let contents = match std::str::from_utf8(file.contents) {
            Ok(text) => fill(text, &values).into_bytes(),
            Err(_) => file.contents.to_vec(),
        };
        write(dir, file.path, &contents)?;
    }
    println!("Created {} ({}): {} files", dir.display(), language.title, COMMON.len() + language.files.len());
    println!("Next:\n  cd {}\n  ./build.sh   # installs {} into .toolchain/ on first use\n  ./test.sh    # runs {name} under Warden with policy.yaml", dir.display(), language.toolchain);
    Ok(())
}

fn write(dir: &Path, path: &str, contents: &[u8]) -> Result<(), Failure> {
    let target = dir.join(path);
    let failed = |e: std::io::Error| Failure { status: Failure::FAILED, message: format!("cannot write {}: {e}", target.display()) };
    std::fs::create_dir_all(target.parent().expect("a file in the project")).map_err(failed)?;
    std::fs::write(&target, contents).map_err(failed)?;
    if path.ends_with(".sh") {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).map_err(failed)?;
    }
    Ok(())
}
