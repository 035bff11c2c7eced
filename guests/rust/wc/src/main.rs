//! wc: a command that counts lines, words and bytes of its arguments (or
//! stdin), as guests/c/wc does: the Rust command `warden run` runs.

#![cfg_attr(all(panic = "unwind", target_family = "wasm"), feature(asm_experimental_arch))]

use std::io::Read;

// Built with unwinding (guests/rust/toolchain.sh's Debian route), a program
// needs the tag LLVM's WebAssembly exceptions use; wasi-libc has none.
// Tools get it from warden-tool.
#[cfg(all(panic = "unwind", target_family = "wasm"))]
core::arch::global_asm!(".globl __cpp_exception", ".tagtype __cpp_exception i32", "__cpp_exception:");

fn count(mut input: impl Read, name: &str) -> i32 {
    let mut bytes = Vec::new();
    let failed = input.read_to_end(&mut bytes).is_err();
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    let words = bytes.split(|b| b.is_ascii_whitespace() || *b == 0x0b).filter(|w| !w.is_empty()).count();
    println!("{lines:7} {words:7} {:7} {name}", bytes.len());
    i32::from(failed)
}

fn main() {
    let names: Vec<String> = std::env::args().skip(1).collect();
    if names.is_empty() {
        std::process::exit(count(std::io::stdin(), ""));
    }
    let mut status = 0;
    for name in &names {
        match std::fs::File::open(name) {
            Ok(file) => status |= count(file, name),
            Err(e) => {
                eprintln!("wc: {name}: {}", describe(&e));
                status = 1;
            }
        }
    }
    std::process::exit(status);
}

/// The error as C's strerror words it (Rust adds "(os error N)").
fn describe(error: &std::io::Error) -> String {
    let text = error.to_string();
    text.split(" (os error").next().unwrap_or(&text).to_owned()
}
