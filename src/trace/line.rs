//! A trace's lines: the format a path asks for ([`TraceFormat`]); which attempts a run writes,
//! with what the engine's events do not carry recovered on the herd paths (a client's item
//! number, an `occ` attempt's send); what a format writes around the values (the columns'
//! layout, worked out once); and a line's bytes, its integers and exact decimal seconds
//! formatted in place.

use std::path::Path;

use super::record::{Attempt, Next, Outcome};
use super::sample::Sample;
use super::writer::RunInfo;
use crate::config::ConfigError;
use crate::time::{SimDuration, SimTime, NANOS_PER_SEC};

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

/// A herd client's position, kept by the writer when the events do not carry it.
#[derive(Clone, Copy, Default)]
struct ClientState {
    call: u32,
    next_sent: u64,
}

/// What turns a run's attempts into lines, wherever they are written: the format's pieces,
/// the start of each line, the sample, and the herd clients' positions (clients
/// `first_client..`).
#[derive(Clone)]
pub(super) struct Lines {
    layout: Layout,
    sample: Sample,
    /// The run's seed (the sample's input); `None` before the first run.
    pub(super) seed: Option<u64>,
    per_client: bool,
    /// The start of each line of the current run, up to the client's number: `{"run":0,
    /// "strategy":"full-jitter","client":` or `0,full-jitter,`, padded to [`PREFIX`] when it
    /// fits (`prefix_len` long).
    prefix: [u8; PREFIX],
    prefix_len: usize,
    /// The prefix when it does not fit [`PREFIX`] (copied by length).
    long_prefix: Vec<u8>,
    clients: Vec<ClientState>,
    first_client: u32,
    /// Lines written (the header not counted).
    pub(super) count: u64,
}

impl Lines {
    pub(super) fn new(format: TraceFormat, sample: Sample) -> Lines {
        Lines {
            layout: Layout::new(format),
            sample,
            seed: None,
            per_client: false,
            prefix: [0; PREFIX],
            prefix_len: 0,
            long_prefix: Vec::new(),
            clients: Vec::new(),
            first_client: 0,
            count: 0,
        }
    }

    pub(super) fn begin_run(&mut self, run: &RunInfo) {
        self.clients.clear();
        self.first_client = 0;
        self.per_client = run.per_client;
        if run.per_client {
            self.clients
                .resize(run.clients as usize, ClientState::default());
        }
        let layout = &self.layout;
        let mut prefix = Vec::new();
        prefix.extend_from_slice(layout.before_bytes(Column::Run));
        prefix.extend_from_slice(int_digits(u64::from(run.index), &mut [0; 20]));
        prefix.extend_from_slice(layout.before_bytes(Column::Strategy));
        prefix.extend_from_slice(run.strategy.as_bytes());
        prefix.extend_from_slice(layout.before_bytes(Column::Client));
        self.prefix_len = prefix.len();
        self.prefix = [0; PREFIX];
        if prefix.len() <= PREFIX {
            self.prefix[..prefix.len()].copy_from_slice(&prefix);
            self.long_prefix.clear();
        } else {
            self.long_prefix = prefix;
        }
        self.seed = Some(run.seed);
    }

    /// The same run's lines for clients `first..last` alone, counted from none.
    pub(super) fn for_part(&self, first: u32, last: u32) -> Lines {
        Lines {
            layout: self.layout.clone(),
            sample: self.sample,
            seed: self.seed,
            per_client: self.per_client,
            prefix: self.prefix,
            prefix_len: self.prefix_len,
            long_prefix: self.long_prefix.clone(),
            clients: if self.per_client {
                vec![ClientState::default(); (last - first) as usize]
            } else {
                Vec::new()
            },
            first_client: first,
            count: 0,
        }
    }

    /// Moves the client's position on and says whether `a` is written, with its call number
    /// and send time: on the herd paths the item number and an `occ` send come from the
    /// client's previous line.
    #[inline(always)]
    pub(super) fn keep(&mut self, a: &Attempt) -> Option<(u32, u64)> {
        let seed = self.seed?;
        let (call, sent) = if self.per_client {
            let s = &mut self.clients[(a.client - self.first_client) as usize];
            let kept = (
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
            kept
        } else {
            (a.call.unwrap_or(0), a.sent.map_or(0, SimTime::as_nanos))
        };
        self.sample.keeps(seed, a.client).then_some((call, sent))
    }

    /// Writes `a`'s line into `bytes` at `at` (which has `LINE_ROOM` bytes of room) and
    /// returns where it ends.
    #[inline(always)]
    pub(super) fn write(
        &mut self,
        a: &Attempt,
        call: u32,
        sent: u64,
        bytes: &mut [u8],
        at: usize,
    ) -> usize {
        let layout = &self.layout;
        let mut line = Line { bytes, at };
        if self.long_prefix.is_empty() {
            line.put_padded(&self.prefix, self.prefix_len);
        } else {
            line.put(&self.long_prefix);
        }
        line.put_int(u64::from(a.client));
        line.put_piece(layout.before(Column::Call));
        line.put_int(u64::from(call));
        if let Some(layer) = a.layer {
            line.put_piece(layout.before(Column::Layer));
            line.put_int(u64::from(layer));
        }
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
            None => line.put_piece(&layout.absent),
        }
        line.put_piece(layout.before(Column::Ended));
        line.put_seconds_again(a.ended.as_nanos(), last);
        // The outcome, what followed and the keys around them are one piece; so are the
        // wait when absent, the tab's state and the line's end.
        let middle = &layout.outcome_next[a.outcome as usize][next_index(a.next)];
        line.put_padded(&middle.bytes, middle.len);
        let hidden = match a.hidden {
            None => 0,
            Some(false) => 1,
            Some(true) => 2,
        };
        let tail = match a.next {
            Next::Retry(wait) => {
                line.put_seconds(wait.as_nanos());
                &layout.tail[0][hidden]
            }
            _ => &layout.tail[1][hidden],
        };
        line.put_piece(tail);
        self.count += 1;
        line.at
    }
}

/// The bytes a short piece of a line is copied in (one fixed-size move, not a call): the
/// buffer keeps this much room past the longest line, and a piece's bytes past its length are
/// overwritten by what follows.
const PIECE: usize = 32;

/// The bytes a line's prefix is copied in, when it fits.
const PREFIX: usize = 128;

/// The most bytes a padded copy writes past the longest line: the outcome's piece (a line's
/// prefix is copied at its start, within the longest line).
pub(super) const PAD_MAX: usize = 2 * PIECE;

/// A short piece of a line: its bytes, padded to `N` ([`PIECE`] by default), and its length.
#[derive(Clone, Copy)]
struct Piece<const N: usize = PIECE> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Piece<N> {
    const fn new(text: &[u8]) -> Piece<N> {
        assert!(text.len() <= N);
        let mut bytes = [0u8; N];
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

/// A line being written into a buffer at `at` (which has room for the longest and
/// [`PAD_MAX`] more).
struct Line<'a> {
    bytes: &'a mut [u8],
    at: usize,
}

/// `'0'` in every byte: added to eight digit values, their ASCII.
const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

/// The eight decimal digits of `n` (below 10^8), most significant first, as the bytes of a
/// little-endian word (digit values, not ASCII): the two four-digit halves, then each half's
/// two pairs, then each pair's two digits, worked in the word's lanes at once (a
/// multiplication by a reciprocal and a shift each: 10 486 / 2^20 is exact for 1/100 below
/// 10^4, 103 / 2^10 for 1/10 below 100).
#[inline(always)]
fn eight_digits(n: u32) -> u64 {
    let n = u64::from(n);
    let halves = (n / 10_000) | ((n % 10_000) << 32);
    let high_pairs = ((halves * 10_486) >> 20) & 0x0000_007f_0000_007f;
    let pairs = ((halves - 100 * high_pairs) << 16) | high_pairs;
    let tens = ((pairs * 103) >> 10) & 0x000f_000f_000f_000f;
    ((pairs - 10 * tens) << 8) | tens
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

    /// Appends `n` in decimal: one digit alone (most call and attempt numbers, the seconds
    /// of most times), below 10^8 (every client, call and attempt number, every time under
    /// three years) as eight digits at once without their leading zeros, above two digits a
    /// division.
    #[inline(always)]
    fn put_int(&mut self, n: u64) {
        if n < 10 {
            self.put_padded(&[b'0' + n as u8], 1);
        } else if n < 100_000_000 {
            let digits = eight_digits(n as u32);
            // The leading zeros are the word's low zero bytes; 0 keeps one.
            let zeros = (digits.trailing_zeros() / 8).min(7) as usize;
            let ascii = (digits + ASCII_ZEROS) >> (8 * zeros);
            self.put_padded(&ascii.to_le_bytes(), 8 - zeros);
        } else {
            let mut digits = [0; 20];
            let digits = int_digits(n, &mut digits);
            self.put(digits);
        }
    }

    /// Appends `ns` nanoseconds as exact decimal seconds (`3.0`, `0.25`, `1.000000001`).
    #[inline(always)]
    fn put_seconds(&mut self, ns: u64) {
        self.put_int(ns / NANOS_PER_SEC);
        let frac = (ns % NANOS_PER_SEC) as u32;
        if frac == 0 {
            self.put_padded(b".0", 2);
            return;
        }
        // Nine digits, zero-padded, without their trailing zeros (at least one digit is
        // kept: `frac` is not zero): the point and the first digit, then eight at once,
        // whose trailing zeros are the word's high zero bytes.
        self.put_padded(&[b'.', b'0' + (frac / 100_000_000) as u8], 2);
        let rest = eight_digits(frac % 100_000_000);
        let zeros = (rest.leading_zeros() / 8) as usize;
        self.put_padded(&(rest + ASCII_ZEROS).to_le_bytes(), 8 - zeros);
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
            let copy: [u8; PIECE] = self.bytes[last.1.start..last.1.start + PIECE]
                .try_into()
                .unwrap();
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
    /// Written only on a layered run's lines.
    Layer,
    Attempt,
    Sent,
    Arrived,
    Ended,
    Outcome,
    Next,
    Wait,
    Hidden,
}

/// The names of the [`Column`]s, in their order: the JSON keys and the CSV header (`layer`
/// only for a layered run).
pub(super) const COLUMNS: [&str; 13] = [
    "run", "strategy", "client", "call", "layer", "attempt", "sent", "arrived", "ended", "outcome",
    "next", "wait", "hidden",
];

/// The columns written as strings: quoted in JSON.
const QUOTED: [bool; 13] = [
    false, true, false, false, false, false, false, false, false, true, true, false, false,
];

/// What a format writes around the values of a line, worked out once from [`COLUMNS`]: the
/// bytes before each value (in JSON the closing quote of a string before it, the comma, the
/// key and a string's opening quote; in CSV the comma), after the last, and for an absent
/// value; and the runs of them a line writes as one piece.
#[derive(Clone)]
struct Layout {
    before: [Piece; 13],
    absent: Piece,
    /// From the end of `ended` to the start of `wait`'s value: the outcome and what followed
    /// with their keys, by [`Outcome`] and [`next_index`].
    outcome_next: [[Piece<{ 2 * PIECE }>; 6]; 4],
    /// From the end of `wait`'s value (`[0]`) or of `next`'s, the wait absent (`[1]`), to the
    /// line's end: the tab's state absent, visible or hidden (`[_][0..3]`).
    tail: [[Piece; 3]; 2],
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
        let before_bytes = |i: usize| -> Vec<u8> {
            let mut bytes = close(i).to_vec();
            if json {
                bytes.extend_from_slice(if i == 0 { b"{\"" } else { b",\"" });
                bytes.extend_from_slice(COLUMNS[i].as_bytes());
                bytes.extend_from_slice(if QUOTED[i] { b"\":\"" } else { b"\":" });
            } else if i > 0 {
                bytes.push(b',');
            }
            bytes
        };
        let before = std::array::from_fn(|i| Piece::new(&before_bytes(i)));
        let mut end = close(COLUMNS.len()).to_vec();
        end.extend_from_slice(if json { b"}\n" } else { b"\n" });
        let absent: &[u8] = if json { b"null" } else { b"" };
        const OUTCOMES: [Outcome; 4] = [
            Outcome::Served,
            Outcome::Refused,
            Outcome::TimedOut,
            Outcome::Failed,
        ];
        const NEXTS: [Next; 6] = [
            Next::Done,
            Next::Retry(SimDuration::ZERO),
            Next::GaveUp,
            Next::Denied,
            Next::Paused,
            Next::Abandoned,
        ];
        let outcome_next = std::array::from_fn(|o| {
            std::array::from_fn(|n| {
                let mut bytes = before_bytes(Column::Outcome as usize);
                bytes.extend_from_slice(OUTCOMES[o].name().as_bytes());
                bytes.extend_from_slice(&before_bytes(Column::Next as usize));
                bytes.extend_from_slice(NEXTS[n].name().as_bytes());
                bytes.extend_from_slice(&before_bytes(Column::Wait as usize));
                Piece::new(&bytes)
            })
        });
        let tail = std::array::from_fn(|wait_absent| {
            std::array::from_fn(|hidden| {
                let mut bytes = if wait_absent == 1 {
                    absent.to_vec()
                } else {
                    Vec::new()
                };
                bytes.extend_from_slice(&before_bytes(Column::Hidden as usize));
                bytes.extend_from_slice([absent, b"false", b"true"][hidden]);
                bytes.extend_from_slice(&end);
                Piece::new(&bytes)
            })
        });
        Layout {
            before,
            absent: Piece::new(absent),
            outcome_next,
            tail,
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

/// Where `next` is in [`Layout::outcome_next`].
#[inline(always)]
fn next_index(next: Next) -> usize {
    match next {
        Next::Done => 0,
        Next::Retry(_) => 1,
        Next::GaveUp => 2,
        Next::Denied => 3,
        Next::Paused => 4,
        Next::Abandoned => 5,
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
    fn integers_are_their_decimals() {
        let int = |n: u64| {
            let mut bytes = [0u8; 64];
            let mut line = Line {
                bytes: &mut bytes,
                at: 0,
            };
            line.put_int(n);
            let at = line.at;
            String::from_utf8(bytes[..at].to_vec()).unwrap()
        };
        // Every length, both sides of each power of ten, and a stride through the rest
        // (SplitMix64 words, reduced to each length).
        let mut state = 25;
        for n in (0..20)
            .flat_map(|k| {
                let p = 10u64.pow(k);
                [p - 1, p, p + 1, 2 * p, 9 * p]
            })
            .chain((0..10_000).map(|i| crate::rng::splitmix64(&mut state) >> (i % 64)))
            .chain([u64::MAX, 99_999_999, 100_000_000, 12_345_678])
        {
            assert_eq!(int(n), n.to_string(), "{n}");
        }
        for ns in (0..10_000).map(|i| crate::rng::splitmix64(&mut state) >> (i % 64)) {
            let text = seconds(ns);
            let (whole, frac) = text.split_once('.').unwrap();
            assert_eq!(whole, (ns / NANOS_PER_SEC).to_string(), "{ns}");
            let expected = format!("{:09}", ns % NANOS_PER_SEC);
            let expected = expected.trim_end_matches('0');
            assert_eq!(
                frac,
                if expected.is_empty() { "0" } else { expected },
                "{ns}"
            );
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
