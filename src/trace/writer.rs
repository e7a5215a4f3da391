//! The trace writer: formats each [`Attempt`] as a JSON line or a CSV row into a fixed
//! buffer, keeps the seeded sample of clients, and recovers on the herd paths what the
//! engine's events do not carry (a client's item number, an `occ` attempt's send). No file
//! handling: it writes into whatever [`Write`] it is given.

use std::io::{self, Write};
use std::path::Path;

use super::record::{Attempt, Next, Observer};
use crate::config::ConfigError;
use crate::time::{SimTime, NANOS_PER_SEC};

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
    buffer: Vec<u8>,
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
        let mut buffer = Vec::with_capacity(BUFFER_BYTES);
        if format == TraceFormat::Csv {
            buffer.extend_from_slice(COLUMNS.join(",").as_bytes());
            buffer.push(b'\n');
        }
        TraceWriter {
            out,
            buffer,
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
        prefix.extend_from_slice(layout.before(Column::Run));
        push_int(prefix, u64::from(run.index));
        prefix.extend_from_slice(layout.before(Column::Strategy));
        prefix.extend_from_slice(run.strategy.as_bytes());
        prefix.extend_from_slice(layout.before(Column::Client));
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
            if let Err(e) = self.out.write_all(&self.buffer) {
                self.error = Some(e);
            }
        }
        self.buffer.clear();
    }

    fn write_line(&mut self, a: &Attempt, call: u32, sent: u64) {
        let (line, layout) = (&mut self.buffer, &self.layout);
        let wait = match a.next {
            Next::Retry(w) => Some(w.as_nanos()),
            _ => None,
        };
        let absent = layout.absent;
        line.extend_from_slice(&self.prefix);
        push_int(line, u64::from(a.client));
        line.extend_from_slice(layout.before(Column::Call));
        push_int(line, u64::from(call));
        line.extend_from_slice(layout.before(Column::Attempt));
        push_int(line, u64::from(a.attempt));
        line.extend_from_slice(layout.before(Column::Sent));
        push_seconds(line, Some(sent), absent);
        line.extend_from_slice(layout.before(Column::Arrived));
        push_seconds(line, a.arrived.map(SimTime::as_nanos), absent);
        line.extend_from_slice(layout.before(Column::Ended));
        push_seconds(line, Some(a.ended.as_nanos()), absent);
        line.extend_from_slice(layout.before(Column::Outcome));
        line.extend_from_slice(a.outcome.name().as_bytes());
        line.extend_from_slice(layout.before(Column::Next));
        line.extend_from_slice(a.next.name().as_bytes());
        line.extend_from_slice(layout.before(Column::Wait));
        push_seconds(line, wait, absent);
        line.extend_from_slice(layout.before(Column::Hidden));
        line.extend_from_slice(match a.hidden {
            Some(true) => b"true",
            Some(false) => b"false",
            None => absent,
        });
        line.extend_from_slice(&layout.end);
        self.lines += 1;
        // Room for the longest line, always: the buffer never grows past its capacity.
        if self.buffer.len() > BUFFER_BYTES - LINE_BYTES_MAX as usize {
            self.drain();
        }
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
    before: [Vec<u8>; 12],
    end: Vec<u8>,
    absent: &'static [u8],
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
            bytes
        });
        let mut end = close(COLUMNS.len()).to_vec();
        end.extend_from_slice(if json { b"}\n" } else { b"\n" });
        Layout {
            before,
            end,
            absent: if json { b"null" } else { b"" },
        }
    }

    /// The bytes before `column`'s value.
    #[inline]
    fn before(&self, column: Column) -> &[u8] {
        &self.before[column as usize]
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

/// Appends `n` in decimal.
fn push_int(line: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
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
    line.extend_from_slice(&digits[i..]);
}

/// Appends `ns` nanoseconds as exact decimal seconds (`3.0`, `0.25`, `1.000000001`), or
/// `absent`.
fn push_seconds(line: &mut Vec<u8>, ns: Option<u64>, absent: &[u8]) {
    let Some(ns) = ns else {
        line.extend_from_slice(absent);
        return;
    };
    push_int(line, ns / NANOS_PER_SEC);
    line.push(b'.');
    let frac = ns % NANOS_PER_SEC;
    if frac == 0 {
        line.push(b'0');
        return;
    }
    // Nine digits, zero-padded, without their trailing zeros (at least one digit is kept:
    // `frac` is not zero). No allocation: this runs once a time field of every line.
    let mut digits = [b'0'; 9];
    let mut rest = frac;
    for slot in digits.iter_mut().rev() {
        *slot = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    let width = 9 - decimal_trailing_zeros(frac);
    line.extend_from_slice(&digits[..width]);
}

/// The trailing decimal zeros of `n`, above 0.
fn decimal_trailing_zeros(mut n: u64) -> usize {
    let mut zeros = 0;
    while n % 10 == 0 {
        n /= 10;
        zeros += 1;
    }
    zeros
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(ns: u64) -> String {
        let mut v = Vec::new();
        push_seconds(&mut v, Some(ns), b"null");
        String::from_utf8(v).unwrap()
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
