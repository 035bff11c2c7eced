//! `warden mcp` under the real clients agents use: the official Python SDK
//! (both revisions, stdio and HTTP, elicitation answered once, for the session
//! and deny) and a pydantic-ai agent. The scripts are in tests/clients; the
//! clients are installed into .tools/py by guests/build.sh.

use std::process::Command;

fn run_client(script: &str) -> String {
    let python = super::repo().join(".tools/py/bin/python");
    assert!(python.exists(), "{} is missing: run `bash guests/build.sh` (the README's first command does)", python.display());
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(python)
        .arg(super::repo().join("tests/clients").join(script))
        .arg(env!("CARGO_BIN_EXE_warden"))
        .arg(dir.path())
        .env("WARDEN_CACHE_DIR", dir.path().join("cache"))
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "{script} failed:\n{stdout}\n{stderr}");
    stdout
}

#[test]
fn the_python_sdk_works_in_both_revisions_over_stdio_and_http_with_approvals() {
    assert_eq!(run_client("mcp_sdk.py"), "ok stdio-2025\nok stdio-2026\nok http-2025\nok http-2026\nok two-http-clients\n");
}

#[test]
fn a_pydantic_ai_agent_is_given_the_exact_denial_text() {
    assert_eq!(run_client("pydantic_ai_agent.py"), "ok pydantic-ai: the model got the file, then the exact denial\n");
}
