//! Output files that are written whole or not at all, into paths that are theirs to replace,
//! and the lock every writer of a path takes.
//!
//! What an output path names is decided first ([`OutputTarget::of`]), before any simulation:
//! - `-` is standard output;
//! - an existing file that is not a regular file (a character device such as `/dev/null`, a
//!   FIFO, a socket), or a symbolic link to one (`/dev/stdout`), is written straight into: it
//!   is never replaced, so running as root cannot delete a device, and a FIFO's reader gets
//!   the bytes;
//! - a regular file, or a path that does not exist yet, is replaced whole: symbolic links are
//!   followed to the file they name (the link stays a link).
//!
//! [`OutputFile::create`] is called before any simulation, so a path that cannot be written
//! fails at once (hyperfine's habit). For a regular target it locks the target
//! ([`OutputLock`]), creates the parent folders and a temporary file beside the target
//! (`.NAME.PID.tmp`); [`OutputFile::commit`] writes the bytes, syncs and renames over the
//! target, so a reader never sees half a file. A file never committed is removed when dropped;
//! one orphaned by a kill (`kill -9` runs no destructor) is removed by the next `create` of the
//! same target once its process is gone ([`remove_stale_temporaries`]).
//!
//! [`OutputLock`] is the one lock of an output path, taken by every writer of a regular file:
//! whole-file writers (runs, charts, `merge`) and files that grow in place (a sweep's CSV). It
//! is an advisory `flock` on `.NAME.lock` beside the target, holding the owner's pid, held
//! until the output is complete. A second process is refused with the first one's pid (so a
//! `merge` or a run cannot replace a file a sweep is still writing); the kernel releases the
//! lock of a process that dies, so a lock file left by a killed run is simply taken over.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// What an output path names. See the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputTarget {
    /// `-`: standard output.
    Stdout,
    /// An existing file that is not a regular file (device, FIFO, socket): written into, never
    /// replaced, never locked.
    Special(PathBuf),
    /// A regular file, or a path not there yet: replaced whole. The path with its symbolic
    /// links followed, so the link is kept and the file it names is written.
    Regular(PathBuf),
}

/// How many symbolic links are followed before giving up (the kernel's own limit, `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

impl OutputTarget {
    /// Decides what `path` names, without writing anything.
    pub fn of(path: &Path) -> io::Result<OutputTarget> {
        if path.as_os_str() == "-" {
            return Ok(OutputTarget::Stdout);
        }
        if path.as_os_str().is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "empty output path",
            ));
        }
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is a folder, not a file", path.display()),
            )),
            Ok(meta) if meta.is_file() => Ok(OutputTarget::Regular(follow_links(path)?)),
            Ok(_) => Ok(OutputTarget::Special(path.to_path_buf())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A dangling link names the file to create; otherwise a missing folder is
                // created, unless a regular file stands where a folder must be.
                let resolved = follow_links(path)?;
                check_folders(&resolved)?;
                Ok(OutputTarget::Regular(resolved))
            }
            Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
                check_folders(path)?;
                Err(e)
            }
            Err(e) => Err(e),
        }
    }

    /// True when both name the same output: both standard output, or the same file (the same
    /// device and inode when both exist, else the same path).
    pub fn same_as(&self, other: &OutputTarget) -> bool {
        match (self, other) {
            (OutputTarget::Stdout, OutputTarget::Stdout) => true,
            (OutputTarget::Stdout, _) | (_, OutputTarget::Stdout) => false,
            (a, b) => same_path(a.path(), b.path()),
        }
    }

    fn path(&self) -> &Path {
        match self {
            OutputTarget::Stdout => Path::new("-"),
            OutputTarget::Special(p) | OutputTarget::Regular(p) => p,
        }
    }
}

/// Checks, before anything is written, that `path` can take an output, and says why not:
/// what [`OutputTarget::of`] refuses (a folder, a file standing where a folder must be), and
/// for a file to replace, a folder it cannot be made in. That folder is the target's, or the
/// nearest one that exists when the missing ones would be made: a probe file is made there
/// (`.herd-sim-probe.PID`, new) and removed at once, so the check holds for root as for
/// anyone, and on file systems that refuse new files whatever their modes (`/proc`). A
/// device or FIFO is written into and standard output always taken, so neither is probed.
pub fn check_writable(path: &Path) -> io::Result<OutputTarget> {
    let target = OutputTarget::of(path)?;
    let OutputTarget::Regular(resolved) = &target else {
        return Ok(target);
    };
    let mut folder = resolved.parent();
    let folder = loop {
        match folder {
            Some(f) if f.as_os_str().is_empty() => break Path::new("."),
            Some(f) if f.is_dir() => break f,
            Some(f) => folder = f.parent(),
            None => break Path::new("."),
        }
    };
    let probe = folder.join(format!(".herd-sim-probe.{}", std::process::id()));
    match OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(file) => {
            drop(file);
            let _ = fs::remove_file(&probe);
        }
        // Another output of this process is probing there: the folder takes new files.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!("no file can be made in {} ({e})", folder.display()),
            ))
        }
    }
    Ok(target)
}

/// True when `a` and `b` name one file: the same device and inode when both exist, otherwise
/// the same path once the folders that exist are resolved.
pub fn same_path(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (fs::metadata(a), fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    let resolve = |p: &Path| -> PathBuf {
        let name = p.file_name().map(|n| n.to_os_string()).unwrap_or_default();
        let parent = match p.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        fs::canonicalize(parent)
            .unwrap_or_else(|_| parent.to_path_buf())
            .join(name)
    };
    resolve(a) == resolve(b)
}

/// `path` with its symbolic links followed to the name they end at (which may not exist).
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) if link.is_relative() => parent.join(link),
                    _ => link,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is a chain of more than {MAX_LINKS} symbolic links",
            path.display()
        ),
    ))
}

/// Refuses a path whose folder cannot be made because a file stands in its place: says "not
/// a directory", naming the file, rather than the system's "File exists".
fn check_folders(path: &Path) -> io::Result<()> {
    for ancestor in path.ancestors().skip(1) {
        if ancestor.as_os_str().is_empty() {
            break;
        }
        match fs::metadata(ancestor) {
            Ok(meta) if meta.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!(
                        "{} is not a directory, so {} cannot be made inside it",
                        ancestor.display(),
                        path.display()
                    ),
                ))
            }
            Err(_) => continue,
        }
    }
    Ok(())
}

/// An output being prepared. See the module documentation.
#[derive(Debug)]
pub struct OutputFile {
    shown: PathBuf,
    sink: Sink,
}

#[derive(Debug)]
enum Sink {
    Stdout(io::Stdout),
    Special(File),
    Replace {
        target: PathBuf,
        temporary: PathBuf,
        file: Option<File>,
        // Released after the temporary is renamed or removed (fields drop after `drop`).
        _lock: OutputLock,
    },
}

impl OutputFile {
    /// Prepares to write `target` (see [`OutputTarget::of`]): standard output for `-`; an
    /// existing device or FIFO opened for writing (a FIFO waits here for its reader); for a
    /// regular target, the lock taken, missing parent folders created and a temporary file
    /// made in the same folder (so the final rename cannot cross file systems).
    pub fn create(target: &Path) -> io::Result<OutputFile> {
        let sink = match OutputTarget::of(target)? {
            OutputTarget::Stdout => Sink::Stdout(io::stdout()),
            OutputTarget::Special(path) => {
                Sink::Special(OpenOptions::new().write(true).open(path)?)
            }
            OutputTarget::Regular(path) => {
                let parent = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                fs::create_dir_all(&parent)?;
                let lock = OutputLock::acquire(&path).map_err(LockError::into_io)?;
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "output".to_string());
                remove_stale_temporaries(&parent, &name);
                let temporary = parent.join(temporary_name(&name, std::process::id()));
                let file = File::create(&temporary)?;
                Sink::Replace {
                    target: path,
                    temporary,
                    file: Some(file),
                    _lock: lock,
                }
            }
        };
        Ok(OutputFile {
            shown: target.to_path_buf(),
            sink,
        })
    }

    /// The path as given (`-` for standard output).
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// True when the output is standard output.
    pub fn is_stdout(&self) -> bool {
        matches!(self.sink, Sink::Stdout(_))
    }

    /// Where to write an output too large to hold in memory: write it in pieces here, then
    /// [`OutputFile::commit`] (with the bytes still to append, or none). For a regular target
    /// this is the temporary file: dropped without a commit, everything written is removed.
    pub fn writer(&mut self) -> &mut (dyn Write + Send) {
        match &mut self.sink {
            Sink::Stdout(out) => out,
            Sink::Special(file) => file,
            Sink::Replace { file, .. } => file
                .as_mut()
                .expect("an output file is written before its commit"),
        }
    }

    /// Writes `bytes` and completes the output: for a regular target, syncs and renames the
    /// temporary file over it. On standard output, a reader that has gone (`| head`) is not an
    /// error.
    pub fn commit(mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.sink {
            Sink::Stdout(out) => {
                let mut out = out.lock();
                match out.write_all(bytes).and_then(|()| out.flush()) {
                    Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
                    other => other,
                }
            }
            Sink::Special(file) => file.write_all(bytes).and_then(|()| file.flush()),
            Sink::Replace {
                target,
                temporary,
                file,
                ..
            } => {
                let mut file = file.take().expect("an output file is committed once");
                file.write_all(bytes)?;
                file.sync_all()?;
                drop(file);
                fs::rename(temporary, target)
            }
        }
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Sink::Replace {
            temporary,
            file: Some(_),
            ..
        } = &self.sink
        {
            let _ = fs::remove_file(temporary);
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

impl LockError {
    /// The error as the system would give it, for a writer whose caller names the path
    /// itself (`cannot write PATH: ...`).
    pub fn into_io(self) -> io::Error {
        match self {
            LockError::Busy { pid, .. } => io::Error::new(
                io::ErrorKind::ResourceBusy,
                format!("another herd-sim (pid {pid}) is writing it; wait for it to finish, or write elsewhere"),
            ),
            LockError::Io { path, cause } => {
                io::Error::new(cause.kind(), format!("cannot lock {path}: {cause}"))
            }
        }
    }
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
                // Its first line: a holder writes its pid over a dead one's before cutting
                // the rest, so a longer pid's tail can follow it for a moment.
                let pid = match text.lines().next().unwrap_or("").trim() {
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
            // The pid over whatever a holder that died left, then the rest cut off. Not cut to
            // nothing first: ext4 flushes a file truncated to zero when it is closed (its guard
            // for files rewritten in place), so every release waited milliseconds for a write
            // of a file already removed.
            let pid = format!("{}\n", std::process::id());
            file.write_all(pid.as_bytes()).map_err(io_error)?;
            file.set_len(pid.len() as u64).map_err(io_error)?;
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
    fn a_path_names_stdout_a_special_file_or_a_regular_file_behind_its_links() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        assert_eq!(
            OutputTarget::of(Path::new("-")).unwrap(),
            OutputTarget::Stdout
        );
        assert!(OutputTarget::of(Path::new("")).is_err());
        assert!(OutputTarget::of(dir.path()).is_err(), "a folder");
        assert_eq!(
            OutputTarget::of(Path::new("/dev/null")).unwrap(),
            OutputTarget::Special("/dev/null".into())
        );
        fs::write(at("real"), b"x").unwrap();
        assert_eq!(
            OutputTarget::of(&at("real")).unwrap(),
            OutputTarget::Regular(at("real"))
        );
        assert_eq!(
            OutputTarget::of(&at("new/deeper")).unwrap(),
            OutputTarget::Regular(at("new/deeper"))
        );
        // Two links deep, relative then absolute; and dangling: the name it ends at.
        std::os::unix::fs::symlink("real", at("one")).unwrap();
        std::os::unix::fs::symlink(at("one"), at("two")).unwrap();
        assert_eq!(
            OutputTarget::of(&at("two")).unwrap(),
            OutputTarget::Regular(at("real"))
        );
        std::os::unix::fs::symlink("missing", at("dangling")).unwrap();
        assert_eq!(
            OutputTarget::of(&at("dangling")).unwrap(),
            OutputTarget::Regular(at("missing"))
        );
        std::os::unix::fs::symlink("loop", at("loop")).unwrap();
        let looped = OutputTarget::of(&at("loop")).unwrap_err().to_string();
        assert!(looped.contains("symbolic links"), "{looped}");
        // A file where a folder must be, at any depth.
        for path in [at("real/out"), at("real/a/b/out")] {
            let error = OutputTarget::of(&path).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::NotADirectory);
            assert!(
                error
                    .to_string()
                    .starts_with(&format!("{} is not a directory", at("real").display())),
                "{error}"
            );
        }
        // The same file by two names; stdout only equals stdout.
        assert!(OutputTarget::of(&at("two"))
            .unwrap()
            .same_as(&OutputTarget::of(&at("real")).unwrap()));
        assert!(same_path(&at("one"), &at("real")));
        assert!(same_path(&at("not-yet"), &dir.path().join("./not-yet")));
        assert!(!same_path(&at("not-yet"), &at("real")));
        assert!(!OutputTarget::Stdout.same_as(&OutputTarget::Regular("-".into())));
    }

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
