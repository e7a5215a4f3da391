//! Where a sweep's rows go, so that nothing finished is lost and the file is always valid.
//!
//! The design: the output file holds, at every instant, the header and a **prefix of the final
//! file** — rows 0..k in grid order, each written with a single `write` of whole lines. Cells
//! finish out of order on parallel threads; a row finished ahead of the prefix is appended at
//! once to a **journal** beside the output (`.NAME.pending`, each line the row number then the
//! row) and kept in memory until the rows before it arrive, then written to the output in
//! order. The journal is emptied at the end of every window of [`super::WINDOW`] rows and
//! removed when the sweep completes, so the finished file is complete and in grid order with
//! nothing to rewrite, and memory holds at most one window of rows.
//!
//! `--resume` reads the output back: it keeps every complete line (a line cut by a kill is
//! dropped), checks the header and each row's parameters, replicate and seed against the
//! sweep (a different command is refused, not silently mixed), then reloads the journal's
//! rows beyond the prefix and runs only what is missing. A kill at any instant therefore loses
//! at most the rows being computed at that instant, and none is repeated.
//!
//! This is the one place where the sweep does I/O. The output is deliberately not written
//! through [`crate::output::OutputFile`]: a sweep's file must grow in place to be resumable.
//! It follows the same rules of what a path names ([`OutputTarget`]): `-` and a device or FIFO
//! are written into in grid order with no journal (and cannot be resumed), and a symbolic link
//! is followed, so the lock and the journal sit beside the file the link names.
//! So that two processes never grow the same file (two sweeps, or a sweep and its `--resume`),
//! the output is locked ([`OutputLock`]) before it is read or truncated, until the sink is
//! finished or dropped; the second process is refused with the first one's pid.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{Plan, SweepError};
use crate::output::{OutputLock, OutputTarget};

/// Where the CSV goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// Standard output (`--out -`): rows in grid order, nothing journalled, not resumable.
    Stdout,
    /// A file, grown in place, with its journal beside it.
    File(PathBuf),
}

/// Whether to start over or carry on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Start {
    /// Truncate the output and start from the first row.
    #[default]
    Fresh,
    /// Keep the rows already written (and journalled) and run the rest (`--resume`).
    Resume,
}

/// The rows written so far and those waiting for their turn. See the module documentation.
pub struct RowSink {
    out: Box<dyn Write + Send>,
    shown: String,
    journal: Option<Journal>,
    /// Rows in the output: the next row to write is this one.
    written: u64,
    /// Finished rows ahead of `written`, as CSV lines.
    waiting: BTreeMap<u64, Vec<u8>>,
    /// The output file's lock (none on stdout), released last.
    lock: Option<OutputLock>,
    /// A copy of what the output gets, in grid order ([`RowSink::keep_copy`]).
    copy: Option<RowCopy>,
}

/// A copy of a sweep's CSV as it is written (header and rows in grid order), for a reader
/// that needs the rows once the sweep ends (`--html`) even when the output cannot be read
/// back (standard output, a FIFO).
#[derive(Clone, Debug, Default)]
pub struct RowCopy(Arc<Mutex<Vec<u8>>>);

impl RowCopy {
    /// The bytes copied so far.
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

struct Journal {
    path: PathBuf,
    file: File,
}

/// One CSV line (the csv crate quotes what needs quoting).
pub(super) fn line(fields: &[String]) -> Vec<u8> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    // Writing to a Vec cannot fail.
    let _ = writer.write_record(fields);
    writer.into_inner().unwrap_or_default()
}

/// The journal of `target`: a hidden file beside it.
pub fn journal_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sweep".into());
    target.with_file_name(format!(".{name}.pending"))
}

/// The bytes of `path` up to and including the last newline: complete lines only.
fn complete_lines(bytes: &[u8]) -> &[u8] {
    match bytes.iter().rposition(|&b| b == b'\n') {
        Some(end) => &bytes[..=end],
        None => &[],
    }
}

/// The length of `file`'s complete lines (through its last newline), found from the end a
/// block at a time: only the tail after the last newline is read, not the whole output.
fn complete_length(mut file: File) -> io::Result<u64> {
    let mut block = vec![0u8; 64 << 10];
    let mut end = file.metadata()?.len();
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let part = &mut block[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(part)?;
        if let Some(last) = part.iter().rposition(|&b| b == b'\n') {
            return Ok(start + last as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

impl RowSink {
    /// Opens the output before anything is simulated, so a path that cannot be written fails
    /// at once; with [`Start::Resume`], reads back and checks what an earlier run wrote.
    pub fn open(
        plan: &Plan,
        destination: &Destination,
        start: Start,
    ) -> Result<RowSink, SweepError> {
        let path = match destination {
            Destination::Stdout if start == Start::Resume => return Err(SweepError::Setting {
                field: "--resume",
                value: "with --out -".into(),
                accepted:
                    "accepted: --resume with an output file (standard output cannot be read back)"
                        .into(),
            }),
            Destination::Stdout => {
                return RowSink::unjournalled(plan, Box::new(io::stdout()), "standard output")
            }
            Destination::File(path) => path,
        };
        let shown = path.display().to_string();
        let io_error = |cause: io::Error| SweepError::Io {
            path: shown.clone(),
            cause,
        };
        // A device or FIFO is written into like standard output (never replaced, nothing
        // beside it); a symbolic link is followed to the file it names.
        let path = &match OutputTarget::of(path).map_err(io_error)? {
            OutputTarget::Stdout => {
                return RowSink::unjournalled(plan, Box::new(io::stdout()), "standard output")
            }
            OutputTarget::Special(special) if start == Start::Resume => {
                return Err(SweepError::Setting {
                    field: "--resume",
                    value: format!("with --out {}", special.display()),
                    accepted: "accepted: --resume with a regular output file (a device or FIFO cannot be read back)".into(),
                })
            }
            OutputTarget::Special(special) => {
                let file = OpenOptions::new()
                    .write(true)
                    .open(&special)
                    .map_err(io_error)?;
                return RowSink::unjournalled(plan, Box::new(file), &shown);
            }
            OutputTarget::Regular(regular) => regular,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(io_error)?;
        }
        // Before anything is read or truncated: another process may be growing this file.
        let lock = Some(OutputLock::acquire(path)?);
        let existing = match start {
            Start::Resume => match File::open(path) {
                Ok(file) => complete_length(file).map_err(io_error)?,
                Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
                Err(e) => return Err(io_error(e)),
            },
            Start::Fresh => 0,
        };
        let journal_path = journal_path(path);
        if existing == 0 {
            // Nothing to carry on from (or starting over): a fresh file and an empty journal.
            let out = File::create(path).map_err(io_error)?;
            let journal = Journal::create(&journal_path).map_err(io_error)?;
            let mut sink = RowSink {
                out: Box::new(out),
                shown,
                journal: Some(journal),
                written: 0,
                waiting: BTreeMap::new(),
                lock,
                copy: None,
            };
            sink.write_out(&line(&plan.header()))?;
            return Ok(sink);
        }
        // Read back as a stream: the output of a long sweep is never held whole.
        let file = File::open(path).map_err(io_error)?;
        let written = check_rows(plan, BufReader::new(file).take(existing), &shown)?;
        let out = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(io_error)?;
        // Drop a line cut short by the interruption, then append after the last whole one.
        out.set_len(existing).map_err(io_error)?;
        let out = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(io_error)?;
        let waiting = match fs::read(&journal_path) {
            Ok(bytes) => read_journal(plan, complete_lines(&bytes), written, &shown)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(io_error(e)),
        };
        let journal = Journal::create(&journal_path).map_err(io_error)?;
        let mut sink = RowSink {
            out: Box::new(out),
            shown,
            journal: Some(journal),
            written,
            waiting: BTreeMap::new(),
            lock,
            copy: None,
        };
        // Re-journal what the old journal held, then write whatever now extends the prefix.
        for (row, bytes) in waiting {
            sink.hold(row, bytes)?;
        }
        sink.write_ready(Vec::new())?;
        Ok(sink)
    }

    /// A sink with no journal (standard output, a device, a FIFO): rows in grid order, those
    /// finished early held in memory (at most a window), nothing to resume from.
    fn unjournalled(
        plan: &Plan,
        out: Box<dyn Write + Send>,
        shown: &str,
    ) -> Result<RowSink, SweepError> {
        let mut sink = RowSink {
            out,
            shown: shown.into(),
            journal: None,
            written: 0,
            waiting: BTreeMap::new(),
            lock: None,
            copy: None,
        };
        sink.write_out(&line(&plan.header()))?;
        Ok(sink)
    }

    /// Keeps a copy of the CSV from here on, header included: refused once rows are written
    /// (a resumed sweep's first rows are in the file, not in memory).
    pub fn keep_copy(&mut self, plan: &Plan) -> Result<RowCopy, SweepError> {
        if self.finished() > 0 {
            return Err(SweepError::Setting {
                field: "--resume",
                value: "with --html".into(),
                accepted: "accepted: --html on a sweep run whole (draw a resumed sweep's file with herd-sim plot)".into(),
            });
        }
        let copy = RowCopy::default();
        copy.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(&line(&plan.header()));
        self.copy = Some(copy.clone());
        Ok(copy)
    }

    /// Rows in the output so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Rows finished: in the output or waiting for their turn.
    pub fn finished(&self) -> u64 {
        self.written + self.waiting.len() as u64
    }

    /// True when `row` is finished (so a resumed sweep does not run it again).
    pub fn has(&self, row: u64) -> bool {
        row < self.written || self.waiting.contains_key(&row)
    }

    /// Takes a finished row: writes it (and every waiting row it unblocks) if it is next,
    /// otherwise journals it and keeps it until its turn.
    pub fn accept(&mut self, row: u64, fields: &[String]) -> Result<(), SweepError> {
        self.accept_line(row, line(fields))
    }

    /// [`RowSink::accept`] of a row already written as its CSV line.
    pub fn accept_line(&mut self, row: u64, bytes: Vec<u8>) -> Result<(), SweepError> {
        if row == self.written {
            self.written += 1;
            self.write_ready(bytes)
        } else {
            self.hold(row, bytes)
        }
    }

    /// Takes finished rows `first..first + ends.len()`, their lines one after another in
    /// `lines` (row `first + i`'s ending at `ends[i]`): written in one piece when `first` is
    /// next (with every waiting row they unblock), otherwise each journalled and kept until
    /// its turn, as [`RowSink::accept_line`] would.
    pub fn accept_lines(
        &mut self,
        first: u64,
        lines: Vec<u8>,
        ends: &[usize],
    ) -> Result<(), SweepError> {
        if first == self.written {
            self.written += ends.len() as u64;
            return self.write_ready(lines);
        }
        let mut start = 0;
        for (row, &end) in (first..).zip(ends) {
            self.hold(row, lines[start..end].to_vec())?;
            start = end;
        }
        Ok(())
    }

    /// Called when every row of a window is finished: all are in the output, so the journal
    /// can be emptied.
    pub fn end_window(&mut self) -> Result<(), SweepError> {
        debug_assert!(self.waiting.is_empty(), "a window ended with rows waiting");
        if let Some(journal) = &mut self.journal {
            journal.file.set_len(0).map_err(|cause| SweepError::Io {
                path: journal.path.display().to_string(),
                cause,
            })?;
        }
        Ok(())
    }

    /// Flushes the output and removes the journal: the file is complete.
    pub fn finish(mut self) -> Result<(), SweepError> {
        let shown = self.shown.clone();
        self.out
            .flush()
            .map_err(|cause| SweepError::Io { path: shown, cause })?;
        if let Some(journal) = self.journal.take() {
            drop(journal.file);
            fs::remove_file(&journal.path).map_err(|cause| SweepError::Io {
                path: journal.path.display().to_string(),
                cause,
            })?;
        }
        drop(self.lock.take());
        Ok(())
    }

    fn hold(&mut self, row: u64, bytes: Vec<u8>) -> Result<(), SweepError> {
        if let Some(journal) = &mut self.journal {
            let mut entry = row.to_string().into_bytes();
            entry.push(b',');
            entry.extend_from_slice(&bytes);
            journal
                .file
                .write_all(&entry)
                .map_err(|cause| SweepError::Io {
                    path: journal.path.display().to_string(),
                    cause,
                })?;
        }
        self.waiting.insert(row, bytes);
        Ok(())
    }

    /// Writes `first` (rows already counted in `written`) and every waiting row that follows,
    /// in one write so that the file only ever grows by whole lines.
    fn write_ready(&mut self, mut batch: Vec<u8>) -> Result<(), SweepError> {
        while let Some(bytes) = self.waiting.remove(&self.written) {
            batch.extend_from_slice(&bytes);
            self.written += 1;
        }
        if batch.is_empty() {
            return Ok(());
        }
        self.write_out(&batch)
    }

    fn write_out(&mut self, bytes: &[u8]) -> Result<(), SweepError> {
        if let Some(copy) = &self.copy {
            copy.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend_from_slice(bytes);
        }
        self.out
            .write_all(bytes)
            .and_then(|()| self.out.flush())
            .map_err(|cause| SweepError::Io {
                path: self.shown.clone(),
                cause,
            })
    }
}

impl Journal {
    fn create(path: &Path) -> io::Result<Journal> {
        File::create(path)?;
        let file = OpenOptions::new().append(true).open(path)?;
        Ok(Journal {
            path: path.to_path_buf(),
            file,
        })
    }
}

fn mismatch(shown: &str, reason: String) -> SweepError {
    SweepError::Resume {
        path: shown.to_string(),
        reason,
    }
}

/// Checks an earlier run's output against `plan`: the header, then each row's identifying
/// fields. Returns the number of rows.
fn check_rows(plan: &Plan, lines: impl Read, shown: &str) -> Result<u64, SweepError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(lines);
    let header = plan.header();
    let mut rows = 0u64;
    for (i, record) in reader.records().enumerate() {
        let record = record.map_err(|e| mismatch(shown, format!("it is not valid CSV ({e})")))?;
        let fields: Vec<&str> = record.iter().collect();
        if i == 0 {
            if fields != header {
                return Err(mismatch(
                    shown,
                    "its columns are not this sweep's (was it written with or without --aggregate?)".into(),
                ));
            }
            continue;
        }
        check_row(plan, rows, &fields, header.len(), shown)?;
        rows += 1;
    }
    Ok(rows)
}

/// Checks that `fields` are row `row` of `plan`.
fn check_row(
    plan: &Plan,
    row: u64,
    fields: &[&str],
    width: usize,
    shown: &str,
) -> Result<(), SweepError> {
    if row >= plan.rows() {
        return Err(mismatch(
            shown,
            format!("it has more rows than this sweep's {}", plan.rows()),
        ));
    }
    if fields.len() != width {
        return Err(mismatch(
            shown,
            format!("row {} has {} fields, not {width}", row + 1, fields.len()),
        ));
    }
    let key = plan.key(row)?;
    if fields[..key.len()] != key {
        return Err(mismatch(
            shown,
            format!(
                "row {} is for {}, but this sweep's row {} is for {}",
                row + 1,
                fields[..key.len()].join(","),
                row + 1,
                key.join(",")
            ),
        ));
    }
    Ok(())
}

/// Reads a journal's rows beyond the first `written`, checking each against `plan`.
fn read_journal(
    plan: &Plan,
    bytes: &[u8],
    written: u64,
    shown: &str,
) -> Result<BTreeMap<u64, Vec<u8>>, SweepError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let width = plan.header().len();
    let mut waiting = BTreeMap::new();
    for record in reader.records() {
        let record =
            record.map_err(|e| mismatch(shown, format!("its journal is not valid CSV ({e})")))?;
        let fields: Vec<&str> = record.iter().collect();
        let row: u64 = fields
            .first()
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| mismatch(shown, "its journal has a line without a row number".into()))?;
        if row < written {
            // Already in the output: the run stopped between writing it and emptying the journal.
            continue;
        }
        check_row(plan, row, &fields[1..], width, shown)?;
        let owned: Vec<String> = fields[1..].iter().map(|f| f.to_string()).collect();
        waiting.insert(row, line(&owned));
    }
    Ok(waiting)
}

#[cfg(test)]
mod tests {
    use super::super::{SweepSpec, WINDOW};
    use super::*;

    #[test]
    fn complete_lines_end_at_the_last_newline_even_a_block_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        let length = |bytes: &[u8]| {
            fs::write(&path, bytes).unwrap();
            complete_length(File::open(&path).unwrap()).unwrap()
        };
        assert_eq!(length(b""), 0);
        assert_eq!(length(b"a,b"), 0);
        assert_eq!(length(b"a,b\n"), 4);
        assert_eq!(length(b"a,b\nc,"), 4);
        // A cut line longer than the 64 KiB block: the newline is found in the block before.
        let mut long = b"a,b\n".to_vec();
        long.resize(4 + 70_000, b'x');
        assert_eq!(length(&long), 4);
    }

    fn plan(rows: &str) -> Plan {
        Plan::new(SweepSpec {
            grid: vec![("clients".into(), rows.into())],
            seeds: 2,
            ..Default::default()
        })
        .unwrap()
    }

    fn run_rows(plan: &Plan, sink: &mut RowSink, rows: &[u64]) {
        for &row in rows {
            sink.accept(row, &plan.row(row).unwrap()).unwrap();
        }
    }

    #[test]
    fn out_of_order_rows_wait_in_the_journal_and_the_file_stays_a_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("s.csv");
        let p = plan("10,20,30");
        let mut sink = RowSink::open(&p, &Destination::File(target.clone()), Start::Fresh).unwrap();
        run_rows(&p, &mut sink, &[2, 3]);
        let text = fs::read_to_string(&target).unwrap();
        assert_eq!(
            text.lines().count(),
            1,
            "only the header: rows 0 and 1 are missing"
        );
        let journal = fs::read_to_string(journal_path(&target)).unwrap();
        assert_eq!(journal.lines().count(), 2);
        assert!(journal.starts_with("2,"), "{journal}");
        run_rows(&p, &mut sink, &[0]);
        assert_eq!(fs::read_to_string(&target).unwrap().lines().count(), 2);
        run_rows(&p, &mut sink, &[1]);
        assert_eq!(fs::read_to_string(&target).unwrap().lines().count(), 5);
        run_rows(&p, &mut sink, &[4, 5]);
        sink.end_window().unwrap();
        sink.finish().unwrap();
        assert!(!journal_path(&target).exists());
        let mut expected = line(&p.header());
        for row in 0..6 {
            expected.extend(line(&p.row(row).unwrap()));
        }
        assert_eq!(fs::read(&target).unwrap(), expected);
        const { assert!(WINDOW >= 6) };
    }

    #[test]
    fn resume_drops_a_cut_line_reloads_the_journal_and_refuses_another_sweep() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("s.csv");
        let p = plan("10,20,30");
        let mut sink = RowSink::open(&p, &Destination::File(target.clone()), Start::Fresh).unwrap();
        run_rows(&p, &mut sink, &[0, 1, 4]);
        drop(sink);
        // A kill in the middle of a write leaves half a line.
        let mut file = OpenOptions::new().append(true).open(&target).unwrap();
        file.write_all(b"full-jitter,20,4").unwrap();
        drop(file);
        let resumed = RowSink::open(&p, &Destination::File(target.clone()), Start::Resume).unwrap();
        assert_eq!(resumed.written(), 2);
        assert!(resumed.has(4) && !resumed.has(2) && !resumed.has(5));
        assert_eq!(resumed.finished(), 3);
        drop(resumed);
        assert!(fs::read_to_string(&target).unwrap().ends_with('\n'));
        let other = plan("15,20,30");
        let e = RowSink::open(&other, &Destination::File(target.clone()), Start::Resume)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("this sweep's") && e.contains("--resume"), "{e}");
    }

    #[test]
    fn an_unwritable_path_fails_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan("10");
        let blocker = dir.path().join("file");
        fs::write(&blocker, b"x").unwrap();
        let e = RowSink::open(&p, &Destination::File(blocker.join("s.csv")), Start::Fresh)
            .err()
            .unwrap();
        assert!(!e.is_bad_input());
        let e = RowSink::open(&p, &Destination::File(dir.path().into()), Start::Fresh)
            .err()
            .unwrap();
        assert!(e.to_string().contains("folder"), "{e}");
        assert!(RowSink::open(&p, &Destination::Stdout, Start::Resume).is_err());
    }
}
