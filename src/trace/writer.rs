//! The trace writer: formats each [`Attempt`] as a JSON line or a CSV row into a fixed
//! buffer, keeps the seeded sample of clients, and recovers on the herd paths what the
//! engine's events do not carry (a client's item number, an `occ` attempt's send). No file
//! handling: it writes into whatever [`Write`] it is given.

use std::io::{self, Write};
use std::path::Path;

use super::record::{Attempt, Next, Observer, Outcome};
use crate::config::ConfigError;
use crate::time::{SimDuration, SimTime, NANOS_PER_SEC};

/// Longest line the writer can produce, in bytes: the keys and punctuation (under 140 B),
/// a strategy name (under 30), three 10-digit integers, four times of at most 30 characters
/// and the longest names. The size estimate multiplies the attempts by it.
pub const LINE_BYTES_MAX: u64 = 340;

/// The writer's buffer: a trace of any length holds this much at once.
pub const BUFFER_BYTES: usize = 256 << 10;

/// The salt of the sample's stream (`trace` in ASCII).
const SAMPLE_SALT: u64 = 0x74_7261_6365;
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// How a trace is written, from its path's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// One JSON object a line (`.jsonl`, `.ndjson`, no extension, or `-`).
    JsonLines,
    /// CSV with a header (`.csv`).
    Csv,
}

impl TraceFormat {
    /// The format of a trace written to `path`.
    pub fn for_path(path: &Path) -> Result<TraceFormat, ConfigError> {
        if path.as_os_str() == "-" {
            return Ok(TraceFormat::JsonLines);
        }
        match path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
        {
            None => Ok(TraceFormat::JsonLines),
            Some(e) if e == "jsonl" || e == "ndjson" => Ok(TraceFormat::JsonLines),
            Some(e) if e == "csv" => Ok(TraceFormat::Csv),
            Some(_) => Err(ConfigError::Invalid {
                field: "--trace",
                value: path.display().to_string(),
                accepted: "accepted: a .jsonl, .ndjson or .csv path, a path without extension \
                           (JSON lines), or - (JSON lines on standard output)"
                    .into(),
            }),
        }
    }
}

/// The fraction of clients a trace keeps (see [`crate::trace`] for the rule).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    fraction: f64,
}

impl Default for Sample {
    fn default() -> Self {
        Sample { fraction: 1.0 }
    }
}

impl Sample {
    /// A fraction in (0, 1].
    pub fn new(fraction: f64) -> Result<Sample, ConfigError> {
        if fraction > 0.0 && fraction <= 1.0 {
            Ok(Sample { fraction })
        } else {
            Err(ConfigError::Invalid {
                field: "--trace-sample",
                value: fraction.to_string(),
                accepted: "accepted: a fraction of clients above 0 and at most 1, e.g. 0.01".into(),
            })
        }
    }

    /// The fraction kept.
    pub fn fraction(self) -> f64 {
        self.fraction
    }

    /// True when client `client` of a run with seed `seed` is kept.
    pub fn keeps(self, seed: u64, client: u32) -> bool {
        if self.fraction >= 1.0 {
            return true;
        }
        let mut state =
            (seed ^ SAMPLE_SALT).wrapping_add(u64::from(client).wrapping_mul(GOLDEN_GAMMA));
        let word = crate::rng::splitmix64(&mut state);
        (word as f64) < self.fraction * 18_446_744_073_709_551_616.0
    }
}

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
}

/// A herd client's position, kept by the writer when the events do not carry it.
#[derive(Clone, Copy, Default)]
struct ClientState {
    call: u32,
    next_sent: u64,
}

/// Writes attempts as lines into `W` (see the module documentation).
///
/// Lines are formatted straight into one buffer of [`BUFFER_BYTES`] (no line of their own, no
/// allocation once started), which goes to `W` whole when the next line might not fit: a
/// traced run's cost is the formatting and one copy into the file.
pub struct TraceWriter<W: Write> {
    out: W,
    /// [`BUFFER_BYTES`] long from the start; the lines not yet handed to `W` are its first
    /// `used` bytes.
    buffer: Box<[u8]>,
    used: usize,
    layout: Layout,
    sample: Sample,
    run: Option<RunInfo>,
    /// The start of each line of the current run, up to the client's number: `{"run":0,
    /// "strategy":"full-jitter","client":` or `0,full-jitter,`.
    prefix: Vec<u8>,
    clients: Vec<ClientState>,
    lines: u64,
    error: Option<io::Error>,
}

impl<W: Write> TraceWriter<W> {
    /// A writer into `out`; a CSV trace starts with its header.
    pub fn new(out: W, format: TraceFormat, sample: Sample) -> Self {
        let mut buffer = vec![0u8; BUFFER_BYTES].into_boxed_slice();
        let mut used = 0;
        if format == TraceFormat::Csv {
            let header = COLUMNS.join(",") + "\n";
            buffer[..header.len()].copy_from_slice(header.as_bytes());
            used = header.len();
        }
        TraceWriter {
            out,
            buffer,
            used,
            layout: Layout::new(format),
            sample,
            run: None,
            prefix: Vec::new(),
            clients: Vec::new(),
            lines: 0,
            error: None,
        }
    }

    /// The attempts that follow belong to `run`.
    pub fn begin_run(&mut self, run: RunInfo) {
        self.clients.clear();
        if run.per_client {
            self.clients
                .resize(run.clients as usize, ClientState::default());
        }
        let (prefix, layout) = (&mut self.prefix, &self.layout);
        prefix.clear();
        prefix.extend_from_slice(layout.before_bytes(Column::Run));
        prefix.extend_from_slice(int_digits(u64::from(run.index), &mut [0; 20]));
        prefix.extend_from_slice(layout.before_bytes(Column::Strategy));
        prefix.extend_from_slice(run.strategy.as_bytes());
        prefix.extend_from_slice(layout.before_bytes(Column::Client));
        self.run = Some(run);
    }

    /// Lines written so far (the header not counted).
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Flushes the buffer: the lines written, or the first write error.
    pub fn finish(mut self) -> io::Result<u64> {
        self.drain();
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()?;
        Ok(self.lines)
    }

    /// Hands the buffer to `W` (keeping the first error; after one, lines are dropped).
    fn drain(&mut self) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(&self.buffer[..self.used]) {
                self.error = Some(e);
            }
        }
        self.used = 0;
    }

    fn write_line(&mut self, a: &Attempt, call: u32, sent: u64) {
        let layout = &self.layout;
        let mut line = Line {
            bytes: &mut self.buffer,
            at: self.used,
        };
        let wait = match a.next {
            Next::Retry(w) => Some(w.as_nanos()),
            _ => None,
        };
        let absent = &layout.absent;
        line.put(&self.prefix);
        line.put_int(u64::from(a.client));
        line.put_piece(layout.before(Column::Call));
        line.put_int(u64::from(call));
        line.put_piece(layout.before(Column::Attempt));
        line.put_int(u64::from(a.attempt));
        line.put_piece(layout.before(Column::Sent));
        // Sent, arrived and ended are often the same time (an answer without delays): such a
        // time is formatted once and its bytes copied.
        let sent_at = line.at;
        line.put_seconds(sent);
        let sent_bytes = sent_at..line.at;
        line.put_piece(layout.before(Column::Arrived));
        let mut last = (sent, sent_bytes);
        match a.arrived.map(SimTime::as_nanos) {
            Some(arrived) => last = line.put_seconds_again(arrived, last),
            None => line.put_piece(absent),
        }
        line.put_piece(layout.before(Column::Ended));
        line.put_seconds_again(a.ended.as_nanos(), last);
        line.put_piece(layout.before(Column::Outcome));
        line.put_piece(outcome_piece(a.outcome));
        line.put_piece(layout.before(Column::Next));
        line.put_piece(next_piece(a.next));
        line.put_piece(layout.before(Column::Wait));
        match wait {
            Some(wait) => line.put_seconds(wait),
            None => line.put_piece(absent),
        }
        line.put_piece(layout.before(Column::Hidden));
        const TRUE: Piece = Piece::new(b"true");
        const FALSE: Piece = Piece::new(b"false");
        line.put_piece(match a.hidden {
            Some(true) => &TRUE,
            Some(false) => &FALSE,
            None => absent,
        });
        line.put_piece(&layout.end);
        self.used = line.at;
        self.lines += 1;
        // Room for the longest line and the pieces' overrun, always.
        if self.used > BUFFER_BYTES - LINE_BYTES_MAX as usize - PIECE {
            self.drain();
        }
    }
}

/// The bytes a short piece of a line is copied in (one fixed-size move, not a call): the
/// buffer keeps this much room past the longest line, and a piece's bytes past its length are
/// overwritten by what follows.
const PIECE: usize = 32;

/// A short piece of a line: its bytes, padded to [`PIECE`], and its length.
#[derive(Clone, Copy)]
struct Piece {
    bytes: [u8; PIECE],
    len: usize,
}

impl Piece {
    const fn new(text: &[u8]) -> Piece {
        assert!(text.len() <= PIECE);
        let mut bytes = [0u8; PIECE];
        let mut i = 0;
        while i < text.len() {
            bytes[i] = text[i];
            i += 1;
        }
        Piece {
            bytes,
            len: text.len(),
        }
    }
}

/// A line being written into the writer's buffer at `at` (which has room for the longest and
/// [`PIECE`] more).
struct Line<'a> {
    bytes: &'a mut [u8],
    at: usize,
}

impl Line<'_> {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        self.bytes[self.at..self.at + bytes.len()].copy_from_slice(bytes);
        self.at += bytes.len();
    }

    #[inline(always)]
    fn put_piece(&mut self, piece: &Piece) {
        self.put_padded(&piece.bytes, piece.len);
    }

    /// The first `len` bytes of `bytes`, copied whole.
    #[inline(always)]
    fn put_padded<const N: usize>(&mut self, bytes: &[u8; N], len: usize) {
        let to: &mut [u8; N] = (&mut self.bytes[self.at..self.at + N]).try_into().unwrap();
        *to = *bytes;
        self.at += len;
    }

    /// Appends `n` in decimal, two digits a division, straight into the line.
    #[inline(always)]
    fn put_int(&mut self, mut n: u64) {
        let len = n.checked_ilog10().unwrap_or(0) as usize + 1;
        let digits = &mut self.bytes[self.at..self.at + 20];
        let mut i = len;
        while n >= 100 {
            let pair = (n % 100) as usize * 2;
            n /= 100;
            i -= 2;
            digits[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        }
        if n >= 10 {
            let pair = n as usize * 2;
            digits[0..2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        } else {
            digits[0] = b'0' + n as u8;
        }
        self.at += len;
    }

    /// Appends `ns` nanoseconds as exact decimal seconds (`3.0`, `0.25`, `1.000000001`).
    fn put_seconds(&mut self, ns: u64) {
        self.put_int(ns / NANOS_PER_SEC);
        let frac = ns % NANOS_PER_SEC;
        if frac == 0 {
            self.put(b".0");
            return;
        }
        // Nine digits, zero-padded, without their trailing zeros (at least one digit is
        // kept: `frac` is not zero), three at a time from a table.
        let (high, mid, low) = (
            (frac / 1_000_000) as usize,
            (frac / 1_000 % 1_000) as usize,
            (frac % 1_000) as usize,
        );
        let mut digits = [b'.'; 10];
        digits[1..4].copy_from_slice(&DIGIT_TRIPLES[high]);
        digits[4..7].copy_from_slice(&DIGIT_TRIPLES[mid]);
        digits[7..10].copy_from_slice(&DIGIT_TRIPLES[low]);
        let width = if low != 0 {
            10 - trailing_zeros_below_1000(low)
        } else if mid != 0 {
            7 - trailing_zeros_below_1000(mid)
        } else {
            4 - trailing_zeros_below_1000(high)
        };
        self.put_padded(&digits, width);
    }

    /// [`Line::put_seconds`] of `ns`, copying the bytes of `last` (a time and where this line
    /// holds it) when `ns` is that time; returns `ns` and where its bytes now are.
    #[inline(always)]
    fn put_seconds_again(
        &mut self,
        ns: u64,
        last: (u64, std::ops::Range<usize>),
    ) -> (u64, std::ops::Range<usize>) {
        let start = self.at;
        if ns == last.0 {
            let mut copy = [0u8; PIECE];
            copy.copy_from_slice(&self.bytes[last.1.start..last.1.start + PIECE]);
            self.put_padded(&copy, last.1.len());
        } else {
            self.put_seconds(ns);
        }
        (ns, start..self.at)
    }
}

/// A line's columns, in order: a JSON key or a CSV header name each.
#[derive(Clone, Copy)]
enum Column {
    Run,
    Strategy,
    Client,
    Call,
    Attempt,
    Sent,
    Arrived,
    Ended,
    Outcome,
    Next,
    Wait,
    Hidden,
}

/// The names of the [`Column`]s, in their order: the JSON keys and the CSV header.
const COLUMNS: [&str; 12] = [
    "run", "strategy", "client", "call", "attempt", "sent", "arrived", "ended", "outcome", "next",
    "wait", "hidden",
];

/// The columns written as strings: quoted in JSON.
const QUOTED: [bool; 12] = [
    false, true, false, false, false, false, false, false, true, true, false, false,
];

/// What a format writes around the values of a line, worked out once from [`COLUMNS`]: the
/// bytes before each value (in JSON the closing quote of a string before it, the comma, the
/// key and a string's opening quote; in CSV the comma), after the last, and for an absent
/// value.
struct Layout {
    before: [Piece; 12],
    end: Piece,
    absent: Piece,
}

impl Layout {
    fn new(format: TraceFormat) -> Layout {
        let json = format == TraceFormat::JsonLines;
        let close = |column: usize| -> &[u8] {
            if json && column > 0 && QUOTED[column - 1] {
                b"\""
            } else {
                b""
            }
        };
        let before = std::array::from_fn(|i| {
            let mut bytes = close(i).to_vec();
            if json {
                bytes.extend_from_slice(if i == 0 { b"{\"" } else { b",\"" });
                bytes.extend_from_slice(COLUMNS[i].as_bytes());
                bytes.extend_from_slice(if QUOTED[i] { b"\":\"" } else { b"\":" });
            } else if i > 0 {
                bytes.push(b',');
            }
            Piece::new(&bytes)
        });
        let mut end = close(COLUMNS.len()).to_vec();
        end.extend_from_slice(if json { b"}\n" } else { b"\n" });
        Layout {
            before,
            end: Piece::new(&end),
            absent: Piece::new(if json { b"null" } else { b"" }),
        }
    }

    /// The bytes before `column`'s value.
    #[inline]
    fn before(&self, column: Column) -> &Piece {
        &self.before[column as usize]
    }

    /// The bytes before `column`'s value, as a slice.
    fn before_bytes(&self, column: Column) -> &[u8] {
        let piece = self.before(column);
        &piece.bytes[..piece.len]
    }
}

/// An outcome's name as a [`Piece`].
#[inline(always)]
fn outcome_piece(outcome: Outcome) -> &'static Piece {
    const SERVED: Piece = Piece::new(Outcome::Served.name().as_bytes());
    const REFUSED: Piece = Piece::new(Outcome::Refused.name().as_bytes());
    const TIMED_OUT: Piece = Piece::new(Outcome::TimedOut.name().as_bytes());
    match outcome {
        Outcome::Served => &SERVED,
        Outcome::Refused => &REFUSED,
        Outcome::TimedOut => &TIMED_OUT,
    }
}

/// What followed, named as a [`Piece`].
#[inline(always)]
fn next_piece(next: Next) -> &'static Piece {
    const DONE: Piece = Piece::new(Next::Done.name().as_bytes());
    const RETRY: Piece = Piece::new(Next::Retry(SimDuration::ZERO).name().as_bytes());
    const GAVE_UP: Piece = Piece::new(Next::GaveUp.name().as_bytes());
    const DENIED: Piece = Piece::new(Next::Denied.name().as_bytes());
    const PAUSED: Piece = Piece::new(Next::Paused.name().as_bytes());
    match next {
        Next::Done => &DONE,
        Next::Retry(_) => &RETRY,
        Next::GaveUp => &GAVE_UP,
        Next::Denied => &DENIED,
        Next::Paused => &PAUSED,
    }
}

impl<W: Write> Observer for TraceWriter<W> {
    const ON: bool = true;

    fn attempt(&mut self, a: &Attempt) {
        let Some(run) = self.run.take() else {
            return;
        };
        let state = self.clients.get_mut(a.client as usize).copied();
        if let Some(mut s) = state {
            // The herd paths: the item number and an `occ` send come from the client's
            // previous line.
            let (call, sent) = (
                a.call.unwrap_or(s.call),
                a.sent.map_or(s.next_sent, SimTime::as_nanos),
            );
            match a.next {
                Next::Done => {
                    s.call += 1;
                    s.next_sent = a.ended.as_nanos();
                }
                Next::Retry(w) => s.next_sent = a.ended.as_nanos() + w.as_nanos(),
                _ => {}
            }
            self.clients[a.client as usize] = s;
            if self.sample.keeps(run.seed, a.client) {
                self.write_line(a, call, sent);
            }
        } else if self.sample.keeps(run.seed, a.client) {
            let sent = a.sent.map_or(0, SimTime::as_nanos);
            self.write_line(a, a.call.unwrap_or(0), sent);
        }
        self.run = Some(run);
    }
}

/// The two-digit decimal strings `00` to `99`, so that a number is written two digits a
/// division.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// The three-digit decimal strings `000` to `999`, for a time's fraction.
const DIGIT_TRIPLES: [[u8; 3]; 1000] = {
    let mut table = [[0u8; 3]; 1000];
    let mut i = 0;
    while i < 1000 {
        table[i] = [
            b'0' + (i / 100) as u8,
            b'0' + (i / 10 % 10) as u8,
            b'0' + (i % 10) as u8,
        ];
        i += 1;
    }
    table
};

/// `n` in decimal, written at the end of `digits`.
#[inline(always)]
fn int_digits(mut n: u64, digits: &mut [u8; 20]) -> &[u8] {
    let mut i = digits.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        i -= 1;
        digits[i] = b'0' + n as u8;
    }
    &digits[i..]
}

/// The trailing decimal zeros of `n`, in 1..1000, as a three-digit group.
#[inline(always)]
fn trailing_zeros_below_1000(n: usize) -> usize {
    if n % 100 == 0 {
        2
    } else if n % 10 == 0 {
        1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(ns: u64) -> String {
        let mut bytes = [0u8; 64];
        let mut line = Line {
            bytes: &mut bytes,
            at: 0,
        };
        line.put_seconds(ns);
        let at = line.at;
        String::from_utf8(bytes[..at].to_vec()).unwrap()
    }

    #[test]
    fn seconds_are_exact_decimals_of_the_nanoseconds() {
        assert_eq!(seconds(0), "0.0");
        assert_eq!(seconds(3_000_000_000), "3.0");
        assert_eq!(seconds(250_000_000), "0.25");
        assert_eq!(seconds(1_000_000_001), "1.000000001");
        assert_eq!(seconds(12_034_000_000), "12.034");
        assert_eq!(seconds(u64::MAX), "18446744073.709551615");
        for ns in [1u64, 7, 999_999_999, 123_456_789_012, 5_000_000] {
            let text = seconds(ns);
            let (int, frac) = text.split_once('.').unwrap();
            let frac_ns: u64 = format!("{frac:0<9}").parse().unwrap();
            assert_eq!(
                int.parse::<u64>().unwrap() * NANOS_PER_SEC + frac_ns,
                ns,
                "{text}"
            );
        }
    }

    #[test]
    fn the_sample_keeps_its_fraction_and_is_seeded() {
        // 100 000 clients at 0.1: a binomial count with sd 95; 5 sd either side.
        let sample = Sample::new(0.1).unwrap();
        let kept = (0..100_000).filter(|&c| sample.keeps(2015, c)).count();
        assert!((9_525..=10_475).contains(&kept), "{kept}");
        let other = (0..100_000).filter(|&c| sample.keeps(2016, c)).count();
        assert_ne!(
            (0..1000).map(|c| sample.keeps(2015, c)).collect::<Vec<_>>(),
            (0..1000).map(|c| sample.keeps(2016, c)).collect::<Vec<_>>()
        );
        assert!((9_525..=10_475).contains(&other), "{other}");
        assert!((0..1000).all(|c| Sample::default().keeps(1, c)));
        for bad in [0.0, -0.5, 1.5, f64::NAN] {
            assert!(Sample::new(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn formats_follow_the_extension() {
        let f = |p: &str| TraceFormat::for_path(Path::new(p));
        assert_eq!(f("-").unwrap(), TraceFormat::JsonLines);
        assert_eq!(f("t.jsonl").unwrap(), TraceFormat::JsonLines);
        assert_eq!(f("t.NDJSON").unwrap(), TraceFormat::JsonLines);
        assert_eq!(f("trace").unwrap(), TraceFormat::JsonLines);
        assert_eq!(f("t.csv").unwrap(), TraceFormat::Csv);
        assert!(f("t.parquet").is_err());
        assert!(f("t.json").is_err());
    }
}
