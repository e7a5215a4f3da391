//! Output files that are written whole or not at all, and the lock of a file grown in place.
//!
//! [`OutputFile::create`] is called before any simulation, so a path that cannot be written
//! fails at once (hyperfine's habit); it creates the parent folders and a temporary file beside
//! the target (`.NAME.PID.tmp`). [`OutputFile::commit`] writes the bytes, syncs and renames over
//! the target, so a reader never sees half a file. A file never committed is removed when
//! dropped; one orphaned by a kill (`kill -9` runs no destructor) is removed by the next
//! `create` of the same target once its process is gone ([`remove_stale_temporaries`]).
//!
//! [`OutputLock`] is for files that are not written whole but grow in place (a sweep's CSV):
//! an advisory `flock` on `.NAME.lock` beside the target, holding the owner's pid, taken for
//! the whole run. A second process is refused with the first one's pid; the kernel releases
//! the lock of a process that dies, so a lock file left by a killed run is simply taken over.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// An output file being prepared. See the module documentation.
#[derive(Debug)]
pub struct OutputFile {
    target: PathBuf,
    temporary: PathBuf,
    file: Option<File>,
}

impl OutputFile {
    /// Prepares to write `target`: creates missing parent folders and a temporary file in the
    /// same folder (so the final rename cannot cross file systems).
    pub fn create(target: &Path) -> io::Result<OutputFile> {
        if target.as_os_str().is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "empty output path",
            ));
        }
        if target.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is a folder, not a file", target.display()),
            ));
        }
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "output".to_string());
        remove_stale_temporaries(&parent, &name);
        let temporary = parent.join(temporary_name(&name, std::process::id()));
        let file = File::create(&temporary)?;
        Ok(OutputFile {
            target: target.to_path_buf(),
            temporary,
            file: Some(file),
        })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// The temporary file, for an output too large to hold in memory: write it in pieces
    /// here, then [`OutputFile::commit`] (with the bytes still to append, or none). Dropped
    /// without a commit, everything written is removed.
    pub fn writer(&mut self) -> &mut File {
        self.file
            .as_mut()
            .expect("an output file is written before its commit")
    }

    /// Writes `bytes` and renames the temporary file over the target.
    pub fn commit(mut self, bytes: &[u8]) -> io::Result<()> {
        let mut file = self.file.take().expect("an output file is committed once");
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&self.temporary, &self.target)
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if self.file.is_some() {
            let _ = fs::remove_file(&self.temporary);
        }
    }
}

/// The temporary file of `name` written by process `pid`.
fn temporary_name(name: &str, pid: u32) -> String {
    format!(".{name}.{pid}.tmp")
}

/// Removes the temporary files of `name` in `folder` (`.NAME.PID.tmp`) whose process no longer
/// runs: orphans of a killed run. Those of live processes (another run writing the same target
/// right now) are left alone. Best effort: a file that cannot be removed stays.
pub fn remove_stale_temporaries(folder: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(folder) else {
        return;
    };
    let prefix = format!(".{name}.");
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !process_alive(pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// True when a process with this id exists (it may belong to another user). Where that
/// cannot be told, every process counts as alive, so nothing is removed.
pub fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        match rustix::process::test_kill_process(pid) {
            Ok(()) => true,
            Err(e) => e != rustix::io::Errno::SRCH,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// The path's lock file: `.NAME.lock` beside it.
pub fn lock_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    target.with_file_name(format!(".{name}.lock"))
}

/// A target another process is writing, or whose lock cannot be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another live process holds the lock.
    #[error("cannot write {path}: another herd-sim (pid {pid}) is writing it; wait for it to finish, or write to another --out")]
    Busy {
        /// The target.
        path: String,
        /// The holder's pid as its lock file gives it (`unknown` if it has not written it yet).
        pid: String,
    },
    /// The lock file cannot be created or locked.
    #[error("cannot lock {path}: {cause}")]
    Io {
        /// The lock file.
        path: String,
        /// The system's reason.
        cause: io::Error,
    },
}

/// An exclusive advisory lock on an output path, held until dropped. See the module
/// documentation.
#[derive(Debug)]
pub struct OutputLock {
    path: PathBuf,
    _file: File,
}

impl OutputLock {
    /// Locks `target` (whose folder must exist) for this process, or says who holds it.
    pub fn acquire(target: &Path) -> Result<OutputLock, LockError> {
        let path = lock_path(target);
        let io_error = |cause: io::Error| LockError::Io {
            path: path.display().to_string(),
            cause,
        };
        // A holder removes the file as it unlocks: locking a file that has just been removed
        // would lock nothing, so the lock counts only if the path still names the locked file.
        for _ in 0..100 {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io_error)?;
            if !try_lock(&file).map_err(io_error)? {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                let pid = match text.trim() {
                    "" => "unknown".to_string(),
                    pid => pid.to_string(),
                };
                return Err(LockError::Busy {
                    path: target.display().to_string(),
                    pid,
                });
            }
            if !same_file(&file, &path) {
                continue;
            }
            file.set_len(0).map_err(io_error)?;
            file.write_all(format!("{}\n", std::process::id()).as_bytes())
                .map_err(io_error)?;
            return Ok(OutputLock { path, _file: file });
        }
        Err(io_error(io::Error::other(
            "the lock file kept being replaced",
        )))
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Removed while still locked; the lock goes with the file handle just after.
        let _ = fs::remove_file(&self.path);
    }
}

/// Takes an exclusive lock without waiting: false when another process holds it.
fn try_lock(file: &File) -> io::Result<bool> {
    #[cfg(unix)]
    {
        use rustix::fs::{flock, FlockOperation};
        match flock(file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(true),
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        Ok(true)
    }
}

/// True when `path` still names the open `file`.
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

/// Writes `bytes` to `target` whole or not at all.
pub fn write_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    OutputFile::create(target)?.commit(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_whole_and_cleans_up_when_abandoned() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("deep/er/out.csv");
        let out = OutputFile::create(&target).unwrap();
        assert!(!target.exists());
        out.commit(b"a,b\n").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"a,b\n");
        let abandoned = OutputFile::create(&dir.path().join("never.csv")).unwrap();
        drop(abandoned);
        let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "only the committed folder remains: {left:?}");
        assert!(OutputFile::create(dir.path()).is_err());
    }

    /// The pid of a process that has exited (and been reaped).
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn orphan_temporaries_of_dead_processes_go_and_live_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let dead = dir.path().join(temporary_name("out.json", dead_pid()));
        // This test process is alive; its parent (the test harness's) too.
        let live = dir.path().join(temporary_name(
            "out.json",
            std::os::unix::process::parent_id(),
        ));
        let other = dir.path().join(temporary_name("other.json", dead_pid()));
        for path in [&dead, &live, &other] {
            fs::write(path, b"half").unwrap();
        }
        assert!(!process_alive(dead_pid()));
        write_atomic(&dir.path().join("out.json"), b"{}").unwrap();
        assert!(!dead.exists(), "a dead process's orphan is removed");
        assert!(live.exists(), "a live process's temporary is left alone");
        assert!(other.exists(), "another target's files are not touched");
    }

    #[test]
    fn a_lock_is_exclusive_names_its_holder_and_outlives_a_dead_holder() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("s.csv");
        // A lock file left by a killed process: taken over.
        fs::write(lock_path(&target), format!("{}\n", dead_pid())).unwrap();
        let held = OutputLock::acquire(&target).unwrap();
        assert_eq!(
            fs::read_to_string(lock_path(&target)).unwrap(),
            format!("{}\n", std::process::id())
        );
        // flock locks belong to the open file: a second open in this process is refused too.
        match OutputLock::acquire(&target) {
            Err(LockError::Busy { pid, .. }) => assert_eq!(pid, std::process::id().to_string()),
            other => panic!("expected Busy, got {other:?}"),
        }
        drop(held);
        assert!(!lock_path(&target).exists());
        drop(OutputLock::acquire(&target).unwrap());
    }
}
