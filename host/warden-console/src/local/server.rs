//! The console's side of the local channel: each command that connects is
//! listed among the live calls while it stays connected, and its questions
//! are put on the page, one at a time.

use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;
use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, Semaphore};
use tokio_util::codec::{FramedRead, FramedWrite, LinesCodec};

use super::wire::{FromCommand, ToCommand, MAX_LINE};
use crate::hub::{Asked, CallGuard, Console, NewCall, NewQuestion};

/// The most commands connected at once; more wait to be accepted.
const MAX_COMMANDS: usize = 64;
/// The longest name or path a command's message keeps; the most folders a question offers.
const MAX_FIELD: usize = 4096;
const MAX_FOLDERS: usize = 64;

/// The socket being served; dropped, it is removed (if it is still this one).
pub struct LocalServed {
    path: PathBuf,
    inode: u64,
    task: tokio::task::JoinHandle<()>,
    /// Locked while this console serves the policy.
    _lock: std::fs::File,
}

impl Drop for LocalServed {
    fn drop(&mut self) {
        self.task.abort();
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.ino() == self.inode) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Serves `console` to the CLI's commands of `policy` (its canonical path)
/// at `socket` (see [`super::socket_of`]). One console per policy: a second
/// is refused while the first holds the lock beside the socket.
pub async fn serve_local(console: Console, socket: PathBuf, policy: PathBuf) -> io::Result<LocalServed> {
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(socket.with_extension("lock"))?;
    if rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err() {
        return Err(io::Error::new(io::ErrorKind::AddrInUse, format!("a console for this policy already runs (it listens at {})", socket.display())));
    }
    // One left by a console that died: under the lock, nobody else's.
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket)?;
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
    let inode = std::fs::symlink_metadata(&socket)?.ino();
    let slots = Arc::new(Semaphore::new(MAX_COMMANDS));
    let policy = Arc::new(policy);
    let task = tokio::spawn(async move {
        loop {
            let Ok(slot) = slots.clone().acquire_owned().await else { return };
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("the console's socket: {e}");
                    continue;
                }
            };
            let (console, policy) = (console.clone(), policy.clone());
            tokio::spawn(async move {
                if let Err(e) = command(console, stream, &policy).await {
                    tracing::debug!("a command's connection to the console ended: {e}");
                }
                drop(slot);
            });
        }
    });
    Ok(LocalServed { path: socket, inode, task, _lock: lock })
}

/// One command's connection, until it closes it or says something out of turn.
async fn command(console: Console, stream: UnixStream, policy: &std::path::Path) -> io::Result<()> {
    let peer = stream.peer_cred()?;
    if peer.uid() != rustix::process::geteuid().as_raw() {
        return Err(io::Error::other(format!("a process of uid {} is not this user's", peer.uid())));
    }
    let who = match peer.pid() {
        Some(pid) => format!("warden CLI, pid {pid}"),
        None => "warden CLI".to_owned(),
    };
    let (read, write) = stream.into_split();
    let mut heard = FramedRead::new(read, LinesCodec::new_with_max_length(MAX_LINE));
    let mut say = FramedWrite::new(write, LinesCodec::new_with_max_length(MAX_LINE));
    let (cancels, mut cancelled) = mpsc::channel::<()>(1);
    let mut listed: Option<CallGuard> = None;
    let mut asked: Option<(u64, Asked)> = None;
    loop {
        tokio::select! {
            line = heard.next() => {
                let Some(line) = line else { return Ok(()) };
                let line = line.map_err(io::Error::other)?;
                match serde_json::from_str(&line).map_err(io::Error::other)? {
                    FromCommand::Call { policy: theirs, .. } if theirs != policy => {
                        return Err(io::Error::other(format!("a command of {} is not this console's", theirs.display())));
                    }
                    FromCommand::Call { tool, detail, .. } if listed.is_none() => {
                        let call = NewCall { client: who.clone(), tool: cut(&tool), detail: cut(&detail) };
                        let cancels = cancels.clone();
                        listed = Some(console.call_started(call, move || {
                            let _ = cancels.try_send(());
                        }));
                    }
                    FromCommand::Ask { id, question } if listed.is_some() && asked.is_none() => asked = Some((id, console.ask(checked(question, &who)))),
                    // One already answered is gone already.
                    FromCommand::Withdraw { id } => if asked.as_ref().is_some_and(|(asking, _)| *asking == id) {
                        asked = None;
                    },
                    other => return Err(io::Error::other(format!("out of turn: {other:?}"))),
                }
            }
            decision = async { asked.as_mut().expect("checked by the guard").1.answer().await }, if asked.is_some() => {
                let (id, _) = asked.take().expect("checked by the guard");
                say.send(serde_json::to_string(&ToCommand::Answer { id, decision })?).await.map_err(io::Error::other)?;
            }
            Some(()) = cancelled.recv() => {
                say.send(serde_json::to_string(&ToCommand::Cancel)?).await.map_err(io::Error::other)?;
            }
        }
    }
}

/// A command's question as the page shows it: named by the connection's own
/// process, not by what it says, and cut to size.
fn checked(question: NewQuestion, who: &str) -> NewQuestion {
    NewQuestion {
        client: who.to_owned(),
        tool: cut(&question.tool),
        access: match question.access.as_str() {
            "read" => "read",
            "run" => "run",
            _ => "write",
        }
        .to_owned(),
        path: cut(&question.path),
        host_path: cut(&question.host_path),
        reason: cut(&question.reason),
        folders: question.folders.iter().take(MAX_FOLDERS).map(|f| cut(f)).collect(),
        offer_session: question.offer_session,
    }
}

fn cut(text: &str) -> String {
    text.chars().take(MAX_FIELD).collect()
}
