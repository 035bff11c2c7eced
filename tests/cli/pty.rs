//! A pseudo-terminal for driving `warden` as a person would: keys in, screen text out.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::fs::OFlags;
use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};

pub struct Terminal {
    master: File,
    screen: Arc<Mutex<Vec<u8>>>,
    child: Child,
}

impl Terminal {
    /// Starts `command` in its own session with a terminal as stdin, stdout and stderr.
    pub fn spawn(command: Command) -> Terminal {
        Terminal::spawn_after_typing(command, "")
    }

    /// As `spawn`, with `keys` typed into the terminal before the command starts.
    pub fn spawn_after_typing(mut command: Command, keys: &str) -> Terminal {
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(OFlags::NOCTTY.bits() as i32)
            .open(OsStr::from_bytes(name.as_bytes()))
            .unwrap();
        let mut master = File::from(master);
        master.write_all(keys.as_bytes()).unwrap();
        command.stdin(slave.try_clone().unwrap()).stdout(slave.try_clone().unwrap()).stderr(slave);
        // SAFETY: setsid is async-signal-safe; it detaches the child from our terminal, if any.
        unsafe {
            command.pre_exec(|| rustix::process::setsid().map(drop).map_err(Into::into));
        }
        let child = command.spawn().unwrap();
        drop(command);
        let screen = Arc::new(Mutex::new(Vec::new()));
        let (mut reader, sink) = (master.try_clone().unwrap(), screen.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with EIO once the child and its copies of the terminal are gone.
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Terminal { master, screen, child }
    }

    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().unwrap()).replace("\r\n", "\n")
    }

    /// Waits until `text` is on the screen.
    pub fn expect(&self, text: &str) {
        let start = Instant::now();
        while !self.screen().contains(text) {
            assert!(start.elapsed() < Duration::from_secs(20), "{text:?} never appeared; the screen:\n{}", self.screen());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn press(&mut self, key: &str) {
        self.master.write_all(key.as_bytes()).unwrap();
    }

    /// The exit status, and the whole screen.
    pub fn finish(mut self) -> (i32, String) {
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "warden never exited; the screen:\n{}", self.screen());
            std::thread::sleep(Duration::from_millis(20));
        };
        std::thread::sleep(Duration::from_millis(100));
        (status.code().unwrap_or(-1), self.screen())
    }
}
