//! Builds `runner/main.rs`, the program that starts commands inside a
//! container, as one static executable for the target: it must run in any
//! image, whatever libc the image has, or none. std alone, so rustc alone.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=runner/main.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("warden-runner");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        // Containers run Linux programs; elsewhere commands go through the engine.
        std::fs::write(&out, b"").expect("OUT_DIR is writable");
        return;
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let status = Command::new(rustc)
        .args(["--edition", "2024", "--crate-name", "warden_runner", "--target", &target])
        .args(["-C", "opt-level=2", "-C", "target-feature=+crt-static", "-C", "strip=symbols", "-C", "codegen-units=1"])
        .arg("runner/main.rs")
        .arg("-o")
        .arg(&out)
        .status()
        .expect("rustc runs");
    assert!(
        status.success(),
        "building the container runner (runner/main.rs) as a static program failed: it needs the C library's static \
         archive (Debian: libc6-dev)"
    );
}
