//! The trace writer: the engine's observer that writes each kept [`Attempt`]'s line into a
//! fixed buffer and hands it to whatever [`Write`] it is given (no file handling), and the
//! parts a run's clients are formatted in on the worker threads, written in client order.

use std::io::{self, Write};

use super::handoff::Handoff;
use super::line::{Lines, TraceFormat, COLUMNS, PAD_MAX};
use super::record::{Attempt, Observer};
use super::sample::Sample;

/// Longest line the writer can produce, in bytes: the keys and punctuation (130 B with a
/// layered run's `layer`), a strategy name (under 30), four 10-digit integers and a layer's
/// five digits, four times of at most 21 characters (`18446744073.709551615` s), the longest
/// names and `false` (312 B in all). The size estimate multiplies the lines by it.
pub const LINE_BYTES_MAX: u64 = 340;

/// The writer's buffer: a trace of any length holds this much at once.
pub const BUFFER_BYTES: usize = 256 << 10;

/// What the writer needs to know of the run whose attempts come next.
#[derive(Clone, Debug)]
pub struct RunInfo {
    /// The run's place in the invocation, from 0.
    pub index: u32,
    /// The strategy's name.
    pub strategy: String,
    /// The run seed (the sample's input).
    pub seed: u64,
    /// Clients in the run.
    pub clients: u32,
    /// True when the writer must recover each client's item number and sends (the herd
    /// paths with several items a client or the `occ` server).
    pub per_client: bool,
    /// True when the run has retry layers above its own policy: its lines have a `layer`
    /// (every run of one trace has them or none has).
    pub layered: bool,
}

/// Bytes a traced part of a run ([`TracePart`]) starts with room for: its clients are as
/// many as fill it when each writes its most lines (see [`part_clients`]).
pub const PART_BYTES: usize = 1 << 20;

/// Parts a traced run on an independent path holds at once for each worker thread: two
/// being formatted, two being written.
pub const PARTS_PER_THREAD: usize = 4;

/// How many clients a [`TracePart`] takes when a client writes at most `lines_per_client`
/// lines: as many as fill [`PART_BYTES`] with lines of [`LINE_BYTES_MAX`], or `None` when one
/// client alone could pass it (the run is then traced on one thread, into the writer's own
/// buffer, so that memory stays flat).
pub fn part_clients(lines_per_client: u64) -> Option<u32> {
    let client_bytes = lines_per_client.saturating_mul(LINE_BYTES_MAX);
    // The last line's room stays within the buffer too: it never grows.
    let clients = (PART_BYTES - PAD_MAX) as u64 / client_bytes.max(1);
    (clients > 0).then(|| clients.min(u64::from(u32::MAX)) as u32)
}

/// Writes attempts as lines into `W` (see the module documentation).
///
/// Lines are formatted straight into one buffer of [`BUFFER_BYTES`] (no line of their own, no
/// allocation once started), which goes to `W` whole when the next line might not fit: a
/// traced run's cost is the formatting and one copy into the file. An independent path's
/// run is formatted in [`TracePart`]s on its worker threads instead, which the writer writes
/// in client order.
pub struct TraceWriter<W: Write> {
    out: W,
    /// [`BUFFER_BYTES`] long from the start; the lines not yet handed to `W` are its first
    /// `used` bytes.
    buffer: Box<[u8]>,
    used: usize,
    lines: Lines,
    /// The buffers of parts written, for the next parts.
    spare: Vec<Vec<u8>>,
    error: Option<io::Error>,
    /// A CSV trace's header, until the first run says whether its lines have a `layer`.
    header_pending: bool,
}

impl<W: Write> TraceWriter<W> {
    /// A writer into `out`; a CSV trace starts with its header (written with the first run,
    /// which says whether the lines have a `layer`, or at the end when there is none).
    pub fn new(out: W, format: TraceFormat, sample: Sample) -> Self {
        TraceWriter {
            out,
            buffer: vec![0u8; BUFFER_BYTES].into_boxed_slice(),
            used: 0,
            lines: Lines::new(format, sample),
            spare: Vec::new(),
            error: None,
            header_pending: format == TraceFormat::Csv,
        }
    }

    /// Writes a CSV trace's header, with `layer` when `layered`, if not written yet.
    fn header(&mut self, layered: bool) {
        if std::mem::take(&mut self.header_pending) {
            let header = COLUMNS
                .iter()
                .filter(|&&c| layered || c != "layer")
                .copied()
                .collect::<Vec<_>>()
                .join(",")
                + "\n";
            self.buffer[..header.len()].copy_from_slice(header.as_bytes());
            self.used = header.len();
        }
    }

    /// The attempts that follow belong to `run`.
    pub fn begin_run(&mut self, run: RunInfo) {
        self.header(run.layered);
        self.lines.begin_run(&run);
    }

    /// Lines written so far (the header not counted).
    pub fn lines(&self) -> u64 {
        self.lines.count
    }

    /// Flushes the buffer: the lines written, or the first write error.
    pub fn finish(mut self) -> io::Result<u64> {
        self.header(false);
        self.drain();
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()?;
        Ok(self.lines.count)
    }

    /// Hands the buffer to `W` (keeping the first error; after one, lines are dropped).
    fn drain(&mut self) {
        self.write_out(0..self.used, None);
        self.used = 0;
    }

    /// Hands `range` of the buffer, or of `part`'s bytes, to `W`.
    fn write_out(&mut self, range: std::ops::Range<usize>, part: Option<&[u8]>) {
        if self.error.is_none() && !range.is_empty() {
            let bytes = part.unwrap_or(&self.buffer[..]);
            if let Err(e) = self.out.write_all(&bytes[range]) {
                self.error = Some(e);
            }
        }
    }
}

/// Room a line is written into: the longest line and the padded copies' overrun.
const LINE_ROOM: usize = LINE_BYTES_MAX as usize + PAD_MAX;

impl<W: Write + Send> Observer for TraceWriter<W> {
    const ON: bool = true;

    #[inline]
    fn attempt(&mut self, a: &Attempt) {
        if let Some((call, sent)) = self.lines.keep(a) {
            self.used = self.lines.write(a, call, sent, &mut self.buffer, self.used);
            // Room for the longest line and the pieces' overrun, always.
            if self.used > BUFFER_BYTES - LINE_ROOM {
                self.drain();
            }
        }
    }

    fn part(&mut self, first: u32, last: u32) -> Option<TracePart> {
        self.lines.seed?;
        Some(TracePart {
            lines: self.lines.for_part(first, last),
            bytes: self.spare.pop().unwrap_or_default(),
            used: 0,
        })
    }

    fn join(&mut self, part: TracePart) {
        self.drain();
        self.write_out(0..part.used, Some(&part.bytes));
        self.lines.count += part.lines.count;
        self.spare.push(part.bytes);
    }

    /// Formats and writes on a second thread when the run has more than one: the loop then
    /// pays a copy of each attempt instead of its line.
    fn handing_off<R, F: FnOnce(&mut Handoff) -> R>(&mut self, run: F) -> Option<R> {
        (rayon::current_num_threads() > 1).then(|| super::handoff::hand_off(self, run))
    }
}

/// The lines of a range of a run's clients, formatted apart from the writer (on a worker
/// thread) into a buffer of their own, which the writer writes whole
/// ([`Observer::join`]) in client order. Made by the writer's [`Observer::part`].
pub struct TracePart {
    lines: Lines,
    bytes: Vec<u8>,
    used: usize,
}

impl Observer for TracePart {
    const ON: bool = true;

    #[inline]
    fn attempt(&mut self, a: &Attempt) {
        if let Some((call, sent)) = self.lines.keep(a) {
            if self.bytes.len() < self.used + LINE_ROOM {
                // Once for a new buffer; again only past the most lines its clients can write.
                let len = (self.used + LINE_ROOM)
                    .max(2 * self.bytes.len())
                    .max(PART_BYTES);
                self.bytes.resize(len, 0);
            }
            self.used = self.lines.write(a, call, sent, &mut self.bytes, self.used);
        }
    }
}
