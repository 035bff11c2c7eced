//! `wasi:filesystem/types` for the guest: each call goes to wasmtime-wasi,
//! with Warden's rules checked before and after where they apply.

use std::collections::VecDeque;
use std::path::Path;

use wasmtime::component::Resource;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode;
use wasmtime_wasi::p2::bindings::sync::filesystem::types as fs;
use wasmtime_wasi::p2::bindings::sync::io::streams;
use wasmtime_wasi::p2::{FsError, FsResult};
use warden_fs::{follow_final, Denial, Followed};
use warden_policy::Rules;

use super::streams::{CappedOutput, FileReader};
use super::{final_name, join_virtual, shown, GuardedFsView, Origin};

type Fd = Resource<Descriptor>;

impl GuardedFsView<'_> {
    fn origin_of(&self, fd: &Fd) -> FsResult<Origin> {
        self.guard.origin(fd).ok_or_else(|| FsError::trap(wasmtime::format_err!("descriptor has no known mount")))
    }

    fn rules_of(&self, origin: &Origin) -> &Rules {
        self.guard.rules(origin)
    }

    fn vpath(origin: &Origin, path: &str) -> String {
        shown(&join_virtual(&origin.vpath, path))
    }

    /// The open directory behind `fd`, as a cap-std handle for rule checks.
    fn dir_handle(&self, fd: &Fd) -> FsResult<cap_std::fs::Dir> {
        match self.fs.table.get(fd)? {
            Descriptor::Dir(d) => Ok(cap_std::fs::Dir::from_std_file(d.dir.try_clone().map_err(ErrorCode::from)?)),
            Descriptor::File(_) => Err(ErrorCode::NotDirectory.into()),
        }
    }

    fn file_len(&self, fd: &Fd) -> FsResult<u64> {
        match self.fs.table.get(fd)? {
            Descriptor::File(f) => Ok(f.file.metadata().map_err(ErrorCode::from)?.len()),
            Descriptor::Dir(_) => Err(ErrorCode::IsDirectory.into()),
        }
    }

    /// Refuses `path` under `fd` when it names a non-folder whose suffix the
    /// mount does not allow.
    fn check_name(&mut self, fd: &Fd, origin: &Origin, path: &str, known_dir: bool) -> FsResult<()> {
        let rules = self.rules_of(origin);
        let Some(name) = final_name(path) else { return Ok(()) };
        if rules.suffixes.is_none() || rules.allows_name(&name) || known_dir {
            return Ok(());
        }
        if self.dir_handle(fd)?.symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
            return Ok(());
        }
        Err(self.suffix_denial(origin, path, &name))
    }

    fn suffix_denial(&mut self, origin: &Origin, path: &str, name: &str) -> FsError {
        let rules = self.rules_of(origin);
        let denial = Denial::SuffixNotAllowed {
            path: Self::vpath(origin, path),
            suffix: Rules::suffix_of(name).to_owned(),
            allowed: rules.suffixes.as_deref().unwrap_or_default().join(", "),
        };
        self.guard.deny(denial, ErrorCode::Access).into()
    }

    /// Words a refusal from wasmtime-wasi for the model: a write to a
    /// read-only mount, or a path that leads out of the sandbox.
    fn note_refusal<T>(&mut self, origin: &Origin, path: &str, writes: bool, result: FsResult<T>) -> FsResult<T> {
        if let Err(e) = &result
            && matches!(e.downcast_ref(), Some(ErrorCode::NotPermitted | ErrorCode::ReadOnly | ErrorCode::Access))
        {
            let path = Self::vpath(origin, path);
            let denial = if writes && !self.rules_of(origin).writable {
                Denial::ReadOnly { path, writable: self.guard.lists.writable.clone() }
            } else {
                Denial::OutsideSandbox { path, readable: self.guard.lists.readable.clone() }
            };
            self.guard.denials.record(denial);
        }
        result
    }

    fn too_large(&mut self, origin: &Origin, path: &str, size: u64, reading: bool) -> FsError {
        let max = self.rules_of(origin).max_file_bytes.unwrap_or(u64::MAX);
        let path = Self::vpath(origin, path);
        let denial = if reading {
            Denial::FileTooLarge { path, size, max }
        } else {
            Denial::ContentTooLarge { path, size, max }
        };
        self.guard.deny(denial, ErrorCode::FileTooLarge).into()
    }

    fn track(&mut self, fd: &Fd, origin: &Origin, path: &str) {
        let child = Origin { mount: origin.mount, vpath: join_virtual(&origin.vpath, path) };
        self.guard.descriptors.insert(fd.rep(), child);
    }

    /// The path to open: symlinks in the last component are followed here,
    /// checking every name, so that the open itself follows none.
    fn resolve_for_open(&mut self, fd: &Fd, origin: &Origin, flags: fs::PathFlags, path: String) -> FsResult<(fs::PathFlags, String)> {
        if !flags.contains(fs::PathFlags::SYMLINK_FOLLOW) {
            return Ok((flags, path));
        }
        let dir = self.dir_handle(fd)?;
        match follow_final(&dir, Path::new(&path), self.rules_of(origin)).map_err(ErrorCode::from)? {
            Followed::Path(resolved) => {
                let resolved = resolved.to_str().ok_or(ErrorCode::IllegalByteSequence)?.to_owned();
                Ok((fs::PathFlags::empty(), resolved))
            }
            Followed::Refused { name } => Err(self.suffix_denial(origin, &path, &name)),
        }
    }
}

impl fs::Host for GuardedFsView<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<fs::ErrorCode> {
        fs::Host::convert_error_code(&mut self.fs, err)
    }

    fn filesystem_error_code(&mut self, err: Resource<streams::Error>) -> wasmtime::Result<Option<fs::ErrorCode>> {
        fs::Host::filesystem_error_code(&mut self.fs, err)
    }
}

impl fs::HostDescriptor for GuardedFsView<'_> {
    fn open_at(
        &mut self,
        fd: Fd,
        path_flags: fs::PathFlags,
        path: String,
        oflags: fs::OpenFlags,
        flags: fs::DescriptorFlags,
    ) -> FsResult<Fd> {
        let origin = self.origin_of(&fd)?;
        let (names_checked, max) = {
            let rules = self.rules_of(&origin);
            (rules.suffixes.is_some(), rules.max_file_bytes)
        };
        let (open_flags, open_path) = if names_checked {
            let (f, p) = self.resolve_for_open(&fd, &origin, path_flags, path.clone())?;
            self.check_name(&fd, &origin, &p, oflags.contains(fs::OpenFlags::DIRECTORY))?;
            (f, p)
        } else {
            (path_flags, path.clone())
        };
        let writes = flags.contains(fs::DescriptorFlags::WRITE)
            || oflags.intersects(fs::OpenFlags::CREATE | fs::OpenFlags::TRUNCATE);
        let borrowed = Resource::new_borrow(fd.rep());
        let opened = fs::HostDescriptor::open_at(&mut self.fs, borrowed, open_flags, open_path, oflags, flags);
        let opened = self.note_refusal(&origin, &path, writes, opened)?;
        if let Some(max) = max
            && let Ok(size) = self.file_len(&opened)
            && size > max
        {
            fs::HostDescriptor::drop(&mut self.fs, opened).map_err(FsError::trap)?;
            return Err(self.too_large(&origin, &path, size, true));
        }
        self.track(&opened, &origin, &path);
        Ok(opened)
    }

    fn read(&mut self, fd: Fd, len: fs::Filesize, offset: fs::Filesize) -> FsResult<(Vec<u8>, bool)> {
        let origin = self.origin_of(&fd)?;
        if let Some(max) = self.rules_of(&origin).max_file_bytes
            && offset.saturating_add(len) > max
        {
            let size = self.file_len(&fd)?;
            if size > max {
                return Err(self.too_large(&origin, "", size, true));
            }
        }
        fs::HostDescriptor::read(&mut self.fs, fd, len, offset)
    }

    fn read_via_stream(&mut self, fd: Fd, offset: fs::Filesize) -> FsResult<Resource<streams::InputStream>> {
        let origin = self.origin_of(&fd)?;
        let file = match self.fs.table.get(&fd)? {
            Descriptor::File(f) => f.file.clone(),
            Descriptor::Dir(_) => return fs::HostDescriptor::read_via_stream(&mut self.fs, fd, offset),
        };
        let reader = FileReader { file, position: offset, max: self.rules_of(&origin).max_file_bytes };
        Ok(self.fs.table.push(Box::new(reader) as streams::InputStream)?)
    }

    fn write(&mut self, fd: Fd, buf: Vec<u8>, offset: fs::Filesize) -> FsResult<fs::Filesize> {
        let origin = self.origin_of(&fd)?;
        if let Some(max) = self.rules_of(&origin).max_file_bytes {
            let end = offset.saturating_add(buf.len() as u64);
            if end > max {
                return Err(self.too_large(&origin, "", end, false));
            }
        }
        fs::HostDescriptor::write(&mut self.fs, fd, buf, offset)
    }

    fn write_via_stream(&mut self, fd: Fd, offset: fs::Filesize) -> FsResult<Resource<streams::OutputStream>> {
        let origin = self.origin_of(&fd)?;
        let max = self.rules_of(&origin).max_file_bytes;
        let stream = fs::HostDescriptor::write_via_stream(&mut self.fs, fd, offset)?;
        self.cap_output(stream, &origin, offset, max)
    }

    fn append_via_stream(&mut self, fd: Fd) -> FsResult<Resource<streams::OutputStream>> {
        let origin = self.origin_of(&fd)?;
        let max = self.rules_of(&origin).max_file_bytes;
        let position = if max.is_some() { self.file_len(&fd)? } else { 0 };
        let stream = fs::HostDescriptor::append_via_stream(&mut self.fs, fd)?;
        self.cap_output(stream, &origin, position, max)
    }

    fn set_size(&mut self, fd: Fd, size: fs::Filesize) -> FsResult<()> {
        let origin = self.origin_of(&fd)?;
        if self.rules_of(&origin).max_file_bytes.is_some_and(|max| size > max) {
            return Err(self.too_large(&origin, "", size, false));
        }
        fs::HostDescriptor::set_size(&mut self.fs, fd, size)
    }

    fn read_directory(&mut self, fd: Fd) -> FsResult<Resource<fs::DirectoryEntryStream>> {
        let origin = self.origin_of(&fd)?;
        let stream = fs::HostDescriptor::read_directory(&mut self.fs, fd)?;
        let mut entries = Vec::new();
        let mut failure = None;
        loop {
            let next = Resource::new_borrow(stream.rep());
            match fs::HostDirectoryEntryStream::read_directory_entry(&mut self.fs, next) {
                Ok(Some(entry)) => entries.push(entry),
                Ok(None) => break,
                Err(e) => {
                    failure = Some(e.downcast().map_err(FsError::trap)?);
                    break;
                }
            }
        }
        let rules = self.rules_of(&origin);
        entries.retain(|e| e.type_ == fs::DescriptorType::Directory || rules.allows_name(&e.name));
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let mut queue: VecDeque<_> = entries.into_iter().map(Ok).collect();
        queue.extend(failure.map(Err));
        self.guard.listings.insert(stream.rep(), queue);
        Ok(stream)
    }

    fn stat_at(&mut self, fd: Fd, path_flags: fs::PathFlags, path: String) -> FsResult<fs::DescriptorStat> {
        let origin = self.origin_of(&fd)?;
        let borrowed = Resource::new_borrow(fd.rep());
        let stat = fs::HostDescriptor::stat_at(&mut self.fs, borrowed, path_flags, path.clone())?;
        self.check_name(&fd, &origin, &path, stat.type_ == fs::DescriptorType::Directory)?;
        Ok(stat)
    }

    fn set_times_at(
        &mut self,
        fd: Fd,
        path_flags: fs::PathFlags,
        path: String,
        atim: fs::NewTimestamp,
        mtim: fs::NewTimestamp,
    ) -> FsResult<()> {
        let origin = self.origin_of(&fd)?;
        self.check_name(&fd, &origin, &path, false)?;
        let result = fs::HostDescriptor::set_times_at(&mut self.fs, fd, path_flags, path.clone(), atim, mtim);
        self.note_refusal(&origin, &path, true, result)
    }

    fn create_directory_at(&mut self, fd: Fd, path: String) -> FsResult<()> {
        let origin = self.origin_of(&fd)?;
        let result = fs::HostDescriptor::create_directory_at(&mut self.fs, fd, path.clone());
        self.note_refusal(&origin, &path, true, result)
    }

    fn remove_directory_at(&mut self, fd: Fd, path: String) -> FsResult<()> {
        let origin = self.origin_of(&fd)?;
        let result = fs::HostDescriptor::remove_directory_at(&mut self.fs, fd, path.clone());
        self.note_refusal(&origin, &path, true, result)
    }

    fn unlink_file_at(&mut self, fd: Fd, path: String) -> FsResult<()> {
        let origin = self.origin_of(&fd)?;
        self.check_name(&fd, &origin, &path, false)?;
        let result = fs::HostDescriptor::unlink_file_at(&mut self.fs, fd, path.clone());
        self.note_refusal(&origin, &path, true, result)
    }

    fn rename_at(&mut self, fd: Fd, old_path: String, new_fd: Fd, new_path: String) -> FsResult<()> {
        let origin = self.origin_of(&fd)?;
        let new_origin = self.origin_of(&new_fd)?;
        let max = self.rules_of(&new_origin).max_file_bytes;
        let names_checked = self.rules_of(&origin).suffixes.is_some() || self.rules_of(&new_origin).suffixes.is_some();
        // What is being renamed, looked at once, and only when a rule needs it.
        let old = if names_checked || max.is_some() {
            self.dir_handle(&fd)?.symlink_metadata(&old_path).ok()
        } else {
            None
        };
        let old_is_dir = old.as_ref().is_some_and(|m| m.is_dir());
        self.check_name(&fd, &origin, &old_path, old_is_dir)?;
        self.check_name(&new_fd, &new_origin, &new_path, old_is_dir)?;
        if let (Some(max), Some(m)) = (max, &old)
            && m.is_file()
            && m.len() > max
        {
            return Err(self.too_large(&new_origin, &new_path, m.len(), false));
        }
        let (old, new) = (Resource::new_borrow(fd.rep()), Resource::new_borrow(new_fd.rep()));
        let result = fs::HostDescriptor::rename_at(&mut self.fs, old, old_path, new, new_path.clone());
        self.note_refusal(&new_origin, &new_path, true, result)
    }

    fn link_at(
        &mut self,
        fd: Fd,
        old_path_flags: fs::PathFlags,
        old_path: String,
        new_fd: Fd,
        new_path: String,
    ) -> FsResult<()> {
        let origin = self.origin_of(&fd)?;
        let new_origin = self.origin_of(&new_fd)?;
        self.check_name(&fd, &origin, &old_path, false)?;
        self.check_name(&new_fd, &new_origin, &new_path, false)?;
        if let Some(max) = self.rules_of(&new_origin).max_file_bytes
            && let Ok(m) = self.dir_handle(&fd)?.symlink_metadata(&old_path)
            && m.len() > max
        {
            return Err(self.too_large(&new_origin, &new_path, m.len(), false));
        }
        let (old, new) = (Resource::new_borrow(fd.rep()), Resource::new_borrow(new_fd.rep()));
        let result = fs::HostDescriptor::link_at(&mut self.fs, old, old_path_flags, old_path, new, new_path.clone());
        self.note_refusal(&new_origin, &new_path, true, result)
    }

    fn symlink_at(&mut self, fd: Fd, src_path: String, dest_path: String) -> FsResult<()> {
        let origin = self.origin_of(&fd)?;
        self.check_name(&fd, &origin, &dest_path, false)?;
        let result = fs::HostDescriptor::symlink_at(&mut self.fs, fd, src_path, dest_path.clone());
        self.note_refusal(&origin, &dest_path, true, result)
    }

    fn drop(&mut self, fd: Fd) -> wasmtime::Result<()> {
        self.guard.descriptors.remove(&fd.rep());
        fs::HostDescriptor::drop(&mut self.fs, fd)
    }

    // Calls below need no rule of Warden's: wasmtime-wasi's checks suffice.

    fn advise(&mut self, fd: Fd, offset: fs::Filesize, len: fs::Filesize, advice: fs::Advice) -> FsResult<()> {
        fs::HostDescriptor::advise(&mut self.fs, fd, offset, len, advice)
    }

    fn sync_data(&mut self, fd: Fd) -> FsResult<()> {
        fs::HostDescriptor::sync_data(&mut self.fs, fd)
    }

    fn get_flags(&mut self, fd: Fd) -> FsResult<fs::DescriptorFlags> {
        fs::HostDescriptor::get_flags(&mut self.fs, fd)
    }

    fn get_type(&mut self, fd: Fd) -> FsResult<fs::DescriptorType> {
        fs::HostDescriptor::get_type(&mut self.fs, fd)
    }

    fn set_times(&mut self, fd: Fd, atim: fs::NewTimestamp, mtim: fs::NewTimestamp) -> FsResult<()> {
        fs::HostDescriptor::set_times(&mut self.fs, fd, atim, mtim)
    }

    fn sync(&mut self, fd: Fd) -> FsResult<()> {
        fs::HostDescriptor::sync(&mut self.fs, fd)
    }

    fn stat(&mut self, fd: Fd) -> FsResult<fs::DescriptorStat> {
        fs::HostDescriptor::stat(&mut self.fs, fd)
    }

    fn readlink_at(&mut self, fd: Fd, path: String) -> FsResult<String> {
        fs::HostDescriptor::readlink_at(&mut self.fs, fd, path)
    }

    fn is_same_object(&mut self, a: Fd, b: Fd) -> wasmtime::Result<bool> {
        fs::HostDescriptor::is_same_object(&mut self.fs, a, b)
    }

    fn metadata_hash(&mut self, fd: Fd) -> FsResult<fs::MetadataHashValue> {
        fs::HostDescriptor::metadata_hash(&mut self.fs, fd)
    }

    fn metadata_hash_at(&mut self, fd: Fd, path_flags: fs::PathFlags, path: String) -> FsResult<fs::MetadataHashValue> {
        fs::HostDescriptor::metadata_hash_at(&mut self.fs, fd, path_flags, path)
    }
}

impl GuardedFsView<'_> {
    fn cap_output(
        &mut self,
        stream: Resource<streams::OutputStream>,
        origin: &Origin,
        position: u64,
        max: Option<u64>,
    ) -> FsResult<Resource<streams::OutputStream>> {
        let Some(max) = max else { return Ok(stream) };
        let inner = self.fs.table.delete(stream)?;
        let path = Self::vpath(origin, "");
        let capped = CappedOutput { inner, position, max, path, denials: self.guard.denials.clone() };
        Ok(self.fs.table.push(Box::new(capped) as streams::OutputStream)?)
    }
}

impl fs::HostDirectoryEntryStream for GuardedFsView<'_> {
    fn read_directory_entry(&mut self, stream: Resource<fs::DirectoryEntryStream>) -> FsResult<Option<fs::DirectoryEntry>> {
        match self.guard.listings.get_mut(&stream.rep()).and_then(|q| q.pop_front()) {
            Some(Ok(entry)) => Ok(Some(entry)),
            Some(Err(code)) => Err(code.into()),
            None => Ok(None),
        }
    }

    fn drop(&mut self, stream: Resource<fs::DirectoryEntryStream>) -> wasmtime::Result<()> {
        self.guard.listings.remove(&stream.rep());
        fs::HostDirectoryEntryStream::drop(&mut self.fs, stream)
    }
}
