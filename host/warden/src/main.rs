//! `warden`: runs `warden exec` itself, and hands every other command line to
//! `warden-full`, the program beside it, by `execveat` once it is checked (the
//! same process, the same arguments, `argv[0]` kept, so that help and errors
//! read as before).
//!
//! Why two programs: the shell's path needs no WebAssembly runtime, and a
//! program that links one (wasmtime, Cranelift) spends about a millisecond
//! more loading and ending than this one does, on every command. Only what
//! `main` reaches is linked, so this program holds the shell's code alone.

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;
use std::process::ExitCode;

use warden_cli::{Bridge, FULL_PROGRAM};

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let here = std::env::current_exe();
    let bridge = Bridge::serve_or_offer(&args, here.as_deref().ok());
    if let Some(status) = warden_cli::run_exec_only(&args, bridge) {
        return ExitCode::from(status);
    }
    let here = match here {
        // Inside a sandbox this program is the network bridge, and nothing else.
        Ok(here) if here == Path::new(warden_shell::BRIDGE_IN_SANDBOX) => {
            eprintln!("warden: {} is a sandbox's network bridge and runs nothing else", here.display());
            return ExitCode::from(2);
        }
        Ok(here) => here,
        Err(e) => {
            eprintln!("warden: cannot find where this program is, to start {FULL_PROGRAM} beside it: {e}");
            return ExitCode::from(2);
        }
    };
    let e = match open_full(&here) {
        Ok(full) => exec(&full, &args),
        Err(why) => why,
    };
    eprintln!("warden: {e}");
    ExitCode::from(2)
}

/// `warden-full` beside this program, opened (no symbolic link followed) and
/// checked before it is started by that very handle: a regular file of this
/// program's owner that nobody may write who may not write this program (a
/// group may, under a umask of 002, when it may write both). A `warden` left
/// in a shared folder must not start what another user put beside it.
fn open_full(here: &Path) -> Result<OwnedFd, String> {
    use rustix::fs::{FileType, Mode, OFlags};
    let full = here.with_file_name(FULL_PROGRAM);
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let opened = rustix::fs::open(&full, flags, Mode::empty()).map_err(|e| {
        format!(
            "cannot start {}, which runs every command but `warden exec` and belongs beside this program: {}",
            full.display(),
            std::io::Error::from(e)
        )
    })?;
    let refuse = |why: String| {
        format!(
            "will not start {}: {why}; it must be a regular file of this program's owner that no one may write who may not write this program",
            full.display()
        )
    };
    // The running file itself, whatever its path has become since.
    let (theirs, mine) = match (rustix::fs::fstat(&opened), rustix::fs::stat("/proc/self/exe")) {
        (Ok(theirs), Ok(mine)) => (theirs, mine),
        (Err(e), _) | (_, Err(e)) => return Err(refuse(std::io::Error::from(e).to_string())),
    };
    if !FileType::from_raw_mode(theirs.st_mode).is_file() {
        return Err(refuse("it is not a regular file".into()));
    }
    if theirs.st_uid != mine.st_uid {
        return Err(refuse(format!("it belongs to uid {}", theirs.st_uid)));
    }
    let group_as_here = theirs.st_gid == mine.st_gid && mine.st_mode & 0o020 != 0;
    if theirs.st_mode & 0o002 != 0 || (theirs.st_mode & 0o020 != 0 && !group_as_here) {
        return Err(refuse(format!("others than its owner may write it (mode {:o})", theirs.st_mode & 0o7777)));
    }
    Ok(opened)
}

/// Replaces this process with the program open at `program`, given `args` as
/// they are and this environment. `execveat` of the handle checked: no
/// search, no retry through `/bin/sh`; the signal mask and dispositions are
/// this process's (the caller's, SIGPIPE ignored as Rust's runtime does).
fn exec(program: &OwnedFd, args: &[OsString]) -> String {
    let c = |bytes: &[u8]| CString::new(bytes).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput));
    let mut argv = match args.iter().map(|a| c(a.as_bytes())).collect::<Result<Vec<_>, _>>() {
        Ok(argv) => argv,
        Err(e) => return e.to_string(),
    };
    if argv.is_empty() {
        argv.push(c"warden".to_owned());
    }
    let environment = std::env::vars_os().map(|(key, value)| {
        let mut pair = key.into_vec();
        pair.push(b'=');
        pair.extend(value.into_vec());
        c(&pair)
    });
    let envp = match environment.collect::<Result<Vec<_>, _>>() {
        Ok(envp) => envp,
        Err(e) => return e.to_string(),
    };
    let nul_ended = |list: &[CString]| list.iter().map(|s| s.as_ptr().cast_mut()).chain(std::iter::once(std::ptr::null_mut())).collect::<Vec<_>>();
    let (argv, envp) = (nul_ended(&argv), nul_ended(&envp));
    // SAFETY: an open descriptor, an empty path, and null-terminated arrays of
    // NUL-terminated strings, all alive until execveat returns (only on failure).
    unsafe { libc::execveat(program.as_raw_fd(), c"".as_ptr(), argv.as_ptr(), envp.as_ptr(), libc::AT_EMPTY_PATH) };
    format!("cannot start {FULL_PROGRAM}: {}", std::io::Error::last_os_error())
}
