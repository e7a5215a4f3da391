//! Output files that are written whole or not at all.
//!
//! [`OutputFile::create`] is called before any simulation, so a path that cannot be written
//! fails at once (hyperfine's habit); it creates the parent folders and a temporary file beside
//! the target. [`OutputFile::commit`] writes the bytes, syncs and renames over the target, so a
//! reader never sees half a file. A file never committed is removed when dropped.

use std::fs::{self, File};
use std::io::{self, Write};
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
        let temporary = parent.join(format!(".{name}.{}.tmp", std::process::id()));
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
}
