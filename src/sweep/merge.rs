//! `herd-sim merge`: the shards of one sweep (see [`super::shard`]) joined into exactly the file
//! the sweep writes on one machine, or into what `sweep --aggregate` writes.
//!
//! Before a byte is written it checks that every input is a shard (its record beside it), that
//! all records share one fingerprint and this herd-sim's version, that the sweep a record
//! holds has the fingerprint it states, that each shard's block is the one its `K/N` gives, and
//! that the finished shards cover every row of the grid; missing rows are an error naming their
//! first cells and the shards to rerun. Then it streams the rows in grid order from the shards'
//! files into the output: each line is checked against the row's parameters, replicate and seed,
//! shards covering the same rows (a rerun with another N, a copy) are read side by side and
//! must agree byte for byte (one copy is kept), and each file must end where its record says,
//! with the length and digest its record holds. Any failure leaves nothing: the output goes
//! through [`OutputFile`], renamed into place only when complete (or streamed, for `--out -`
//! and a device or FIFO). An output that names one of the inputs is refused before anything
//! is read.
//!
//! Memory does not grow with the rows: one line per open shard file, the partition (two
//! numbers per cell), and with `--aggregate` one cell's metrics over its seeds.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::output::OutputFile;

use super::shard::{fingerprint, record_path, Digest, Partition, Record, RECORD_FORMAT, VERSION};
use super::sink::line;
use super::stats::{Accumulator, Described};
use super::{Layout, Plan, SweepError};

/// What a record's file name ends with.
const RECORD_SUFFIX: &str = ".shard.json";

/// Shards that cannot be merged, or a merged file that cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No shard among the inputs.
    #[error("nothing to merge: {0}")]
    NoInputs(String),
    /// An input without a readable record.
    #[error("{path} is not a shard of a herd-sim sweep: {reason}")]
    NotAShard {
        /// The input.
        path: String,
        /// What is wrong, and how shards are made.
        reason: String,
    },
    /// A shard of another herd-sim version.
    #[error("{path} was written by herd-sim {theirs}, this is herd-sim {ours}; merge with the herd-sim that ran the shards")]
    Version {
        /// The shard.
        path: String,
        /// Its version.
        theirs: String,
        /// Ours.
        ours: String,
    },
    /// Shards of two different sweeps.
    #[error("{first} and {second} are shards of different sweeps (fingerprints {first_fingerprint} and {second_fingerprint}); merge the shards of one sweep only")]
    Fingerprints {
        /// A shard.
        first: String,
        /// Its fingerprint.
        first_fingerprint: String,
        /// A shard of another sweep.
        second: String,
        /// Its fingerprint.
        second_fingerprint: String,
    },
    /// An output that names one of the inputs: writing it would destroy a shard.
    #[error("--out {out} is one of the inputs ({input}); accepted: an output path that no input names, or - for standard output")]
    OutputIsInput {
        /// The output, as given.
        out: String,
        /// The input it names.
        input: String,
    },
    /// Rows of the grid that no finished shard holds.
    #[error("{rows} of the sweep's {total} rows are missing, first {cells}; rerun {shards} (the sweep's command with --shard K/N; --resume carries on an unfinished shard)")]
    Missing {
        /// Rows missing.
        rows: u64,
        /// Rows of the grid.
        total: u64,
        /// The first missing cells, their seeds and shards.
        cells: String,
        /// The shards to rerun.
        shards: String,
    },
    /// A shard's file (or record) is not what its shard wrote.
    #[error("{path} was changed after shard {shard} wrote it: {reason}; rerun that shard")]
    Tampered {
        /// The file.
        path: String,
        /// `K/N`.
        shard: String,
        /// What does not match.
        reason: String,
    },
    /// Two shards hold different bytes for one row.
    #[error("row {row} ({cell}) differs between {first} and {second}; rerun one of those shards")]
    Disagree {
        /// The grid row, from 0.
        row: u64,
        /// Its cell and seed.
        cell: String,
        /// One shard file.
        first: String,
        /// The other.
        second: String,
    },
    /// A shard file that cannot be read.
    #[error("cannot read {path}: {cause}")]
    Read {
        /// The file.
        path: String,
        /// The system's reason.
        cause: io::Error,
    },
    /// The merged file cannot be written.
    #[error("cannot write {path}: {cause}")]
    Write {
        /// The output.
        path: String,
        /// The system's reason.
        cause: io::Error,
    },
}

impl MergeError {
    /// True when the inputs are at fault (exit code 2), false when the output cannot be written.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, MergeError::Write { .. })
    }
}

/// What a merge wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Merged {
    /// Rows written (tidy rows, or cells with `--aggregate`).
    pub rows: u64,
    /// Shard files read.
    pub shards: usize,
    /// Rows read more than once (agreeing duplicates, dropped).
    pub duplicates: u64,
}

/// One input: a shard's CSV and its record.
#[derive(Debug)]
struct Input {
    csv: PathBuf,
    record: Record,
}

impl Input {
    fn shown(&self) -> String {
        self.csv.display().to_string()
    }

    fn tampered(&self, reason: String) -> MergeError {
        MergeError::Tampered {
            path: self.shown(),
            shard: self.record.shard().to_string(),
            reason,
        }
    }
}

/// Merges the shards `inputs` (CSV files, records, or folders of them) into `out`; with
/// `aggregate`, writes one row of statistics per cell as `sweep --aggregate` does.
pub fn merge(inputs: &[PathBuf], out: &Path, aggregate: bool) -> Result<Merged, SweepError> {
    let pairs = gather(inputs)?;
    // Before anything is read or written: the output must not be one of the shards it reads.
    if out.as_os_str() != "-" {
        if let Some(input) = pairs
            .iter()
            .flat_map(|(csv, record)| [csv, record])
            .find(|input| crate::output::same_path(out, input))
        {
            return Err(MergeError::OutputIsInput {
                out: out.display().to_string(),
                input: input.display().to_string(),
            }
            .into());
        }
    }
    let mut shards = Vec::new();
    for (csv, record) in pairs {
        let record = read_record(&csv, &record)?;
        shards.push(Input { csv, record });
    }
    for s in &shards {
        if s.record.version != VERSION {
            return Err(MergeError::Version {
                path: s.shown(),
                theirs: s.record.version.clone(),
                ours: VERSION.into(),
            }
            .into());
        }
    }
    let first = &shards[0];
    if let Some(other) = shards
        .iter()
        .find(|s| s.record.fingerprint != first.record.fingerprint)
    {
        return Err(MergeError::Fingerprints {
            first: first.shown(),
            first_fingerprint: first.record.fingerprint.clone(),
            second: other.shown(),
            second_fingerprint: other.record.fingerprint.clone(),
        }
        .into());
    }
    let plan = Plan::new(first.record.sweep.spec())?;
    if fingerprint(&plan) != first.record.fingerprint {
        return Err(first
            .tampered(format!(
                "the sweep in its record {} does not have the fingerprint the record states",
                record_path(&first.csv).display()
            ))
            .into());
    }
    let partition = Partition::of(&plan)?;
    for s in &shards {
        let r = &s.record;
        let expected = (r.index < r.count).then(|| partition.range(r.shard()));
        if expected.as_ref() != Some(&r.span()) {
            return Err(s
                .tampered(format!(
                    "its record gives rows {:?}, but shard {} of this sweep is rows {:?}",
                    r.span(),
                    r.shard(),
                    expected.unwrap_or(0..0)
                ))
                .into());
        }
    }
    check_coverage(&plan, &partition, &shards)?;
    let mut finished: Vec<&Input> = shards.iter().filter(|s| s.record.finished).collect();
    finished.sort_by_key(|s| (s.record.first_row, s.record.rows));
    let aggregated = if aggregate {
        Some(Plan::new(super::SweepSpec {
            layout: Layout::Aggregate,
            ..first.record.sweep.spec()
        })?)
    } else {
        None
    };
    let write_error = |cause| MergeError::Write {
        path: out.display().to_string(),
        cause,
    };
    let mut file = OutputFile::create(out).map_err(write_error)?;
    let merged = {
        let mut writer = BufWriter::with_capacity(1 << 16, file.writer());
        let merged = stream(
            &plan,
            aggregated.as_ref(),
            &finished,
            &mut writer,
            &write_error,
        )?;
        writer.flush().map_err(write_error)?;
        merged
    };
    file.commit(&[]).map_err(write_error)?;
    Ok(merged)
}

/// The `(csv, record)` pairs the inputs name, each once, folders expanded to their records.
fn gather(inputs: &[PathBuf]) -> Result<Vec<(PathBuf, PathBuf)>, MergeError> {
    if inputs.is_empty() {
        return Err(MergeError::NoInputs(
            "no shard given; accepted: the shards' CSV files, their records (FILE.shard.json) or a folder holding them".into(),
        ));
    }
    let csv_of = |record: &Path| -> Option<PathBuf> {
        record
            .to_str()
            .and_then(|t| t.strip_suffix(RECORD_SUFFIX))
            .filter(|t| !t.is_empty() && !t.ends_with('/'))
            .map(PathBuf::from)
    };
    let mut pairs = Vec::new();
    let mut seen = BTreeSet::new();
    for input in inputs {
        let mut found = Vec::new();
        if input.is_dir() {
            let entries = fs::read_dir(input).map_err(|cause| MergeError::Read {
                path: input.display().to_string(),
                cause,
            })?;
            let mut records: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| csv_of(p).is_some())
                .collect();
            records.sort();
            if records.is_empty() {
                return Err(MergeError::NoInputs(format!(
                    "{} holds no shard records (*{RECORD_SUFFIX})",
                    input.display()
                )));
            }
            for record in records {
                found.extend(csv_of(&record).map(|csv| (csv, record)));
            }
        } else if let Some(csv) = csv_of(input) {
            found.push((csv, input.clone()));
        } else {
            found.push((input.clone(), record_path(input)));
        }
        for (csv, record) in found {
            if seen.insert(record.clone()) {
                pairs.push((csv, record));
            }
        }
    }
    Ok(pairs)
}

fn read_record(csv: &Path, record: &Path) -> Result<Record, MergeError> {
    let not_a_shard = |reason: String| MergeError::NotAShard {
        path: csv.display().to_string(),
        reason,
    };
    if !csv.is_file() {
        return Err(not_a_shard("no such file".into()));
    }
    let text = match fs::read_to_string(record) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(not_a_shard(format!(
                "no record {} beside it (`herd-sim sweep --shard K/N --out FILE` writes a shard's rows to FILE and its record to FILE{RECORD_SUFFIX})",
                record.display()
            )))
        }
        Err(cause) => {
            return Err(MergeError::Read {
                path: record.display().to_string(),
                cause,
            })
        }
    };
    let parsed: Result<Record, _> = serde_json::from_str(&text);
    match parsed {
        Ok(r) if r.format == RECORD_FORMAT => Ok(r),
        Ok(r) => Err(not_a_shard(format!(
            "its record {} is of format `{}`, not `{RECORD_FORMAT}`",
            record.display(),
            r.format
        ))),
        Err(e) => Err(not_a_shard(format!(
            "its record {} does not read ({e})",
            record.display()
        ))),
    }
}

impl Plan {
    /// The varied parameters of `cell`, `name=value, …` (`the one cell` when nothing varies).
    fn describe_cell(&self, cell: u64) -> String {
        let coordinates = self.coordinates(cell);
        let parts: Vec<String> = self
            .axes
            .iter()
            .zip(&coordinates)
            .filter(|(axis, _)| axis.len() > 1)
            .map(|(axis, &i)| format!("{}={}", axis.parameter.name, axis.value(i)))
            .collect();
        if parts.is_empty() {
            "the one cell".into()
        } else {
            parts.join(", ")
        }
    }
}

fn shards_text(shards: Range<u64>, count: u64) -> String {
    if shards.end - shards.start == 1 {
        format!("shard {}/{count}", shards.start)
    } else {
        format!(
            "shards {}/{count} to {}/{count}",
            shards.start,
            shards.end - 1
        )
    }
}

/// Fails with [`MergeError::Missing`] when a row of the grid is in no finished shard.
fn check_coverage(plan: &Plan, partition: &Partition, shards: &[Input]) -> Result<(), MergeError> {
    let total = plan.grid_rows();
    let mut spans: Vec<Range<u64>> = shards
        .iter()
        .filter(|s| s.record.finished)
        .map(|s| s.record.span())
        .filter(|r| !r.is_empty())
        .collect();
    spans.sort_by_key(|r| r.start);
    let mut missing = Vec::new();
    let mut next = 0;
    for span in spans {
        if span.start > next {
            missing.push(next..span.start);
        }
        next = next.max(span.end);
    }
    if next < total {
        missing.push(next..total);
    }
    if missing.is_empty() {
        return Ok(());
    }
    // Shards are named in the count of the first input.
    let count = shards[0].record.count;
    let shards_of = |rows: &Range<u64>| {
        partition.shard_of(rows.start, count)..partition.shard_of(rows.end - 1, count) + 1
    };
    let mut cells = Vec::new();
    'gaps: for gap in &missing {
        let mut row = gap.start;
        while row < gap.end {
            let cell = row / plan.seeds;
            let end = ((cell + 1) * plan.seeds).min(gap.end);
            let seeds = match end - row {
                1 => format!("seed {}", row % plan.seeds),
                _ => format!("seeds {}–{}", row % plan.seeds, (end - 1) % plan.seeds),
            };
            cells.push(format!(
                "cell {cell} ({}) {seeds} in {}",
                plan.describe_cell(cell),
                shards_text(shards_of(&(row..end)), count)
            ));
            if cells.len() == 3 {
                break 'gaps;
            }
            row = end;
        }
    }
    let mut to_rerun = BTreeSet::new();
    for gap in &missing {
        to_rerun.extend(shards_of(gap));
    }
    let mut named: Vec<String> = to_rerun
        .iter()
        .take(8)
        .map(|&k| {
            let unfinished = shards
                .iter()
                .find(|s| !s.record.finished && s.record.index == k && s.record.count == count);
            match unfinished {
                Some(s) => format!("{k}/{count} (unfinished in {})", s.shown()),
                None => format!("{k}/{count}"),
            }
        })
        .collect();
    if to_rerun.len() > 8 {
        named.push(format!("and {} more", to_rerun.len() - 8));
    }
    Err(MergeError::Missing {
        rows: missing.iter().map(|r| r.end - r.start).sum(),
        total,
        cells: cells.join("; "),
        shards: format!(
            "shard{} {}",
            if to_rerun.len() == 1 { "" } else { "s" },
            named.join(", ")
        ),
    })
}

/// A shard's file being read, one line at a time.
struct Cursor<'a> {
    input: &'a Input,
    reader: BufReader<File>,
    /// The grid row of the next line.
    next: u64,
    digest: Digest,
    bytes: u64,
    line: Vec<u8>,
}

impl<'a> Cursor<'a> {
    fn open(input: &'a Input, header: &[u8]) -> Result<Cursor<'a>, MergeError> {
        let file = File::open(&input.csv).map_err(|cause| MergeError::Read {
            path: input.shown(),
            cause,
        })?;
        let mut cursor = Cursor {
            input,
            reader: BufReader::with_capacity(1 << 16, file),
            next: input.record.first_row,
            digest: Digest::default(),
            bytes: 0,
            line: Vec::with_capacity(512),
        };
        if !cursor.read_line()? || cursor.line != header {
            return Err(input.tampered("its header is not the sweep's columns".into()));
        }
        Ok(cursor)
    }

    /// Reads the next line; false at the end of the file or on a line without its newline.
    fn read_line(&mut self) -> Result<bool, MergeError> {
        self.line.clear();
        let n = self
            .reader
            .read_until(b'\n', &mut self.line)
            .map_err(|cause| MergeError::Read {
                path: self.input.shown(),
                cause,
            })?;
        self.digest.update(&self.line);
        self.bytes += n as u64;
        Ok(self.line.last() == Some(&b'\n'))
    }

    fn end(&self) -> u64 {
        self.input.record.span().end
    }

    /// Reads the line of row `self.next`.
    fn advance(&mut self) -> Result<(), MergeError> {
        if !self.read_line()? {
            let record = &self.input.record;
            return Err(self.input.tampered(format!(
                "it ends after {} of its {} rows",
                self.next - record.first_row,
                record.rows
            )));
        }
        self.next += 1;
        Ok(())
    }

    /// Checks that nothing follows the last row and that the file is the one recorded.
    fn close(mut self) -> Result<(), MergeError> {
        let record = &self.input.record;
        if self.read_line()? || !self.line.is_empty() {
            return Err(self
                .input
                .tampered(format!("it has more than its {} rows", record.rows)));
        }
        if record.bytes != Some(self.bytes) || record.digest.as_deref() != Some(&self.digest.hex())
        {
            return Err(self.input.tampered(format!(
                "its bytes do not match the length and digest in its record {}",
                record_path(&self.input.csv).display()
            )));
        }
        Ok(())
    }
}

/// The bytes every line of a row starts with: the row's parameters, replicate and seed, as
/// the sweep writes them, cached per cell.
struct Keys {
    cell: Option<u64>,
    /// The cell's parameter fields as CSV, each followed by a comma.
    parameters: Vec<u8>,
    label: String,
    prefix: Vec<u8>,
}

impl Keys {
    fn new() -> Keys {
        Keys {
            cell: None,
            parameters: Vec::new(),
            label: String::new(),
            prefix: Vec::new(),
        }
    }

    fn prefix(&mut self, plan: &Plan, row: u64) -> Result<&[u8], SweepError> {
        let cell = row / plan.seeds;
        if self.cell != Some(cell) {
            let mut scenario = plan.cell_scenario(cell)?;
            scenario.replicates = 1;
            let mut fields = line(&Plan::parameter_fields(&scenario));
            // `a,b\n` → `a,b,`: the row goes on after the parameters.
            while matches!(fields.last(), Some(b'\n' | b'\r')) {
                fields.pop();
            }
            fields.push(b',');
            self.parameters = fields;
            self.label = plan.seed_label(&scenario);
            self.cell = Some(cell);
        }
        let replicate = row % plan.seeds;
        self.prefix.clear();
        self.prefix.extend_from_slice(&self.parameters);
        let seed = plan.seed_with_label(&self.label, replicate);
        // Writing to a Vec cannot fail.
        let _ = write!(self.prefix, "{replicate},{seed},");
        Ok(&self.prefix)
    }
}

/// One cell's metrics over its seeds, turned into `sweep --aggregate`'s row at its last seed.
struct Aggregator<'p> {
    plan: &'p Plan,
    columns: Vec<Accumulator>,
}

impl Aggregator<'_> {
    /// Takes the metric fields of `row` (the line after its key); returns the aggregate line
    /// when the row is its cell's last seed, or why the fields do not read.
    fn push(&mut self, row: u64, seeds: u64, metrics: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let mut text = metrics;
        while let Some((b'\n' | b'\r', rest)) = text.split_last() {
            text = rest;
        }
        let text = std::str::from_utf8(text).map_err(|_| "a row is not UTF-8".to_string())?;
        let fields: Vec<&str> = text.split(',').collect();
        if fields.len() != self.columns.len() {
            return Err(format!(
                "a row has {} metric fields, not {}",
                fields.len(),
                self.columns.len()
            ));
        }
        for (column, field) in self.columns.iter_mut().zip(fields) {
            // Empty (a metric that did not apply to this seed) is left out, as the sweep does.
            if let Ok(number) = field.parse::<f64>() {
                column.push(number);
            }
        }
        if row % seeds != seeds - 1 {
            return Ok(None);
        }
        let mut out = self.plan.key(row / seeds).map_err(|e| e.to_string())?;
        for column in &mut self.columns {
            out.extend(Described::fields(column.describe()));
            *column = Accumulator::default();
        }
        Ok(Some(line(&out)))
    }
}

/// Writes the header and every row of the grid from the shards, in grid order.
fn stream(
    plan: &Plan,
    aggregated: Option<&Plan>,
    finished: &[&Input],
    out: &mut dyn Write,
    write_error: &dyn Fn(io::Error) -> MergeError,
) -> Result<Merged, SweepError> {
    let header = line(&plan.header());
    let mut aggregator = aggregated.map(|plan| Aggregator {
        plan,
        columns: vec![Accumulator::default(); plan.metrics.len()],
    });
    let written_header = match &aggregator {
        Some(a) => line(&a.plan.header()),
        None => header.clone(),
    };
    out.write_all(&written_header).map_err(write_error)?;
    // Empty shards only need their header, length and digest checked.
    let mut waiting = Vec::new();
    for &input in finished {
        if input.record.rows == 0 {
            Cursor::open(input, &header)?.close()?;
        } else {
            waiting.push(input);
        }
    }
    let mut waiting = waiting.into_iter().peekable();
    let mut active: Vec<Cursor> = Vec::new();
    let mut keys = Keys::new();
    let mut duplicates = 0;
    for row in 0..plan.grid_rows() {
        while let Some(input) = waiting.next_if(|i| i.record.first_row == row) {
            active.push(Cursor::open(input, &header)?);
        }
        let prefix = keys.prefix(plan, row)?;
        for cursor in &mut active {
            cursor.advance()?;
            if !cursor.line.starts_with(prefix) {
                let number = cursor.next - cursor.input.record.first_row;
                return Err(cursor
                    .input
                    .tampered(format!(
                        "its row {number} is not row {row} of the sweep ({}, seed {}): its parameters, replicate or seed differ",
                        plan.describe_cell(row / plan.seeds),
                        row % plan.seeds
                    ))
                    .into());
            }
        }
        let (first, others) = active
            .split_first()
            .expect("coverage was checked: some shard holds every row");
        if let Some(other) = others.iter().find(|c| c.line != first.line) {
            return Err(MergeError::Disagree {
                row,
                cell: format!(
                    "{}, seed {}",
                    plan.describe_cell(row / plan.seeds),
                    row % plan.seeds
                ),
                first: first.input.shown(),
                second: other.input.shown(),
            }
            .into());
        }
        duplicates += others.len() as u64;
        match &mut aggregator {
            None => out.write_all(&first.line).map_err(write_error)?,
            Some(a) => {
                let done = a
                    .push(row, plan.seeds, &first.line[prefix.len()..])
                    .map_err(|reason| first.input.tampered(reason))?;
                if let Some(bytes) = done {
                    out.write_all(&bytes).map_err(write_error)?;
                }
            }
        }
        let mut i = 0;
        while i < active.len() {
            if active[i].next == active[i].end() {
                active.remove(i).close()?;
            } else {
                i += 1;
            }
        }
    }
    Ok(Merged {
        rows: aggregated.map_or(plan.grid_rows(), Plan::grid_rows),
        shards: finished.len(),
        duplicates,
    })
}

#[cfg(test)]
mod tests {
    use super::super::SweepSpec;
    use super::*;

    #[test]
    fn the_cached_key_is_the_start_of_the_sweeps_row() {
        let plan = Plan::new(SweepSpec {
            grid: vec![
                ("clients".into(), "10,20".into()),
                ("strategy".into(), "fixed,full-jitter".into()),
            ],
            seeds: 3,
            ..Default::default()
        })
        .unwrap();
        let mut keys = Keys::new();
        for row in 0..plan.rows() {
            let mut expected = line(&plan.key(row).unwrap());
            expected.pop();
            expected.push(b',');
            assert_eq!(keys.prefix(&plan, row).unwrap(), expected, "row {row}");
            let whole = line(&plan.row(row).unwrap());
            assert!(whole.starts_with(&expected));
        }
    }
}
