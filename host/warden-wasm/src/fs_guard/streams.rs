//! File streams that stop at a mount's `max_file_bytes`.

use std::io;
use std::sync::Arc;

use bytes::Bytes;
use warden_fs::Denial;
use wasmtime_wasi::p2::{InputStream, OutputStream, Pollable, StreamError, StreamResult};

use super::DenialLog;


/// The error a guest sees past the limit: `EFBIG`, "file too large".
pub(super) fn too_large() -> io::Error {
    io::Error::from_raw_os_error(rustix::io::Errno::FBIG.raw_os_error())
}

/// Largest single read from a file, in bytes.
const MAX_READ: usize = 1 << 20;

/// A file's `read-via-stream`. It replaces wasmtime-wasi's stream, which
/// zero-fills a fresh 64 KiB buffer for every read: this one reads straight
/// into fresh capacity, up to 1 MiB at a time, and stops at `max` bytes when
/// the file really is larger.
pub(super) struct FileReader {
    pub file: Arc<std::fs::File>,
    pub position: u64,
    pub max: Option<u64>,
}

impl FileReader {
    fn check(&self, size: usize) -> StreamResult<()> {
        let Some(max) = self.max else { return Ok(()) };
        if self.position.saturating_add(size as u64) <= max {
            return Ok(());
        }
        match self.file.metadata() {
            Ok(m) if m.len() > max => Err(StreamError::LastOperationFailed(too_large().into())),
            _ => Ok(()),
        }
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for FileReader {
    async fn ready(&mut self) {}
}

#[wasmtime_wasi::async_trait]
impl InputStream for FileReader {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        if size == 0 {
            return Ok(Bytes::new());
        }
        self.check(size)?;
        let mut buf = Vec::with_capacity(size.min(MAX_READ));
        loop {
            match rustix::io::pread(&*self.file, rustix::buffer::spare_capacity(&mut buf), self.position) {
                Ok(0) => return Err(StreamError::Closed),
                Ok(n) => {
                    self.position += n as u64;
                    return Ok(Bytes::from(buf));
                }
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(StreamError::LastOperationFailed(io::Error::from(e).into())),
            }
        }
    }

    async fn blocking_read(&mut self, size: usize) -> StreamResult<Bytes> {
        self.read(size)
    }
}

/// Writes through `inner` until the file would pass `max` bytes.
pub(super) struct CappedOutput {
    pub inner: Box<dyn OutputStream>,
    pub position: u64,
    pub max: u64,
    /// The file's virtual path, for the denial.
    pub path: String,
    pub denials: DenialLog,
}

impl CappedOutput {
    fn check(&self, len: usize) -> StreamResult<()> {
        let size = self.position.saturating_add(len as u64);
        if size > self.max {
            // Recorded here as well as returned: a guest's libc may report
            // any stream error as a bare EIO.
            self.denials.record(Denial::ContentTooLarge { path: self.path.clone(), size, max: self.max });
            return Err(StreamError::LastOperationFailed(too_large().into()));
        }
        Ok(())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CappedOutput {
    async fn ready(&mut self) {
        self.inner.ready().await
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for CappedOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.check(bytes.len())?;
        let len = bytes.len() as u64;
        self.inner.write(bytes)?;
        self.position += len;
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.inner.flush()
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.inner.check_write()
    }

    async fn blocking_write_and_flush(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.check(bytes.len())?;
        let len = bytes.len() as u64;
        self.inner.blocking_write_and_flush(bytes).await?;
        self.position += len;
        Ok(())
    }

    fn write_zeroes(&mut self, nelem: usize) -> StreamResult<()> {
        self.check(nelem)?;
        self.inner.write_zeroes(nelem)?;
        self.position += nelem as u64;
        Ok(())
    }

    async fn cancel(&mut self) {
        self.inner.cancel().await
    }
}
