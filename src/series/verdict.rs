//! The collapse verdict: what a window or a stretch of windows says ([`Reading`]), whether
//! and when a run recovered ([`recovered_at`], judged row by row as rows close by
//! [`Recovery`]), and the rule in words ([`verdict_rule`]). Separate from the series it reads:
//! it judges rows, it does not count them.

use super::SeriesRow;
use crate::time::{SimDuration, SimTime};

impl SeriesRow {
    /// What the window says about recovery, alone ([`Stretch::reading`] of this window).
    pub fn reading(&self) -> Reading {
        let mut one = Stretch::default();
        one.add(self);
        one.reading()
    }
}

/// What one stretch of windows says about recovery (see [`Stretch::reading`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// Nothing was answered in it: no evidence either way.
    Quiet,
    /// Calls are succeeding.
    Good,
    /// More than 10 % of its answers are failures.
    Bad,
}

/// The sums of consecutive windows that the verdict reads (a stretch of the recovery hold).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stretch {
    succeeded: u64,
    failed: u64,
}

impl Stretch {
    fn add(&mut self, row: &SeriesRow) {
        self.succeeded += row.succeeded;
        self.failed += row.timed_out + row.refused;
    }

    fn remove(&mut self, row: &SeriesRow) {
        self.succeeded -= row.succeeded;
        self.failed -= row.timed_out + row.refused;
    }

    /// Quiet when nothing was answered in it (no timeout, refusal or success): no evidence
    /// either way, so a stretch where nobody calls any more is no recovery; good when
    /// failures (timeouts and refusals) are at most 10 % of its answers (so it has
    /// successes); bad otherwise. Whether the successes keep up with the calls started,
    /// answered or not, is judged over the whole rest of the run ([`recovered_at`]): a
    /// stretch's own ratio would count a call started at its end and answered after it as
    /// lost.
    pub fn reading(&self) -> Reading {
        let answers = self.succeeded + self.failed;
        if answers == 0 {
            Reading::Quiet
        } else if 10 * self.failed <= answers {
            Reading::Good
        } else {
            Reading::Bad
        }
    }
}

/// The collapse verdict ([`recovered_at`], [`verdict_rule`]) judged row by row, in window
/// order, as the rows close: the stretch of `hold` windows being read (at most `hold` rows),
/// where the recovered state would start (`W`) and the calls started and succeeded since.
/// Stretches are read in order of their start, each once every row it can hold has been
/// seen; a stretch without rows is quiet, so runs of them are skipped at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovery {
    bin: u64,
    /// The first stretch's start (window).
    first: u64,
    hold: u64,
    /// Stretches end by this window boundary (the end of the load) when known in advance;
    /// rows from it on only count toward goodput.
    stop: Option<u64>,
    /// The next stretch to read.
    next: u64,
    /// Rows from `next` on: (window, succeeded, failed, calls started).
    rows: std::collections::VecDeque<(u64, u64, u64, u64)>,
    sums: Stretch,
    /// `W` and the calls started and succeeded from it on.
    recovered: Option<(u64, u64, u64)>,
    /// Every stretch before `stop` has been read.
    closed: bool,
    /// The end of the last row seen (window), for a herd's end.
    seen_end: u64,
}

impl Recovery {
    /// Judges stretches of `hold` windows (at least one) of `bin` from the first window
    /// starting at or after `after`; `stop`, when known before the run, is the end of the
    /// load (Poisson arrivals), else it is given to [`Recovery::at`].
    pub fn new(bin: SimDuration, after: SimTime, hold: u64, stop: Option<SimTime>) -> Self {
        let bin = bin.as_nanos();
        let first = after.as_nanos().div_ceil(bin);
        Recovery {
            bin,
            first,
            hold: hold.max(1),
            stop: stop.map(|s| s.as_nanos().div_ceil(bin)),
            next: first,
            rows: std::collections::VecDeque::new(),
            sums: Stretch::default(),
            recovered: None,
            closed: false,
            seen_end: 0,
        }
    }

    /// Reads every stretch starting before `until` (and fitting before the stop).
    fn read_until(&mut self, until: u64) {
        let last = match self.stop {
            Some(stop) => until.min((stop + 1).saturating_sub(self.hold)),
            None => until,
        };
        while self.next < last {
            while let Some(&(w, ok, bad, _)) = self.rows.front() {
                if w >= self.next {
                    break;
                }
                self.sums.succeeded -= ok;
                self.sums.failed -= bad;
                self.rows.pop_front();
            }
            if self.rows.is_empty() {
                // Quiet stretches up to the next row's: nothing to read.
                self.next = last;
                break;
            }
            match self.sums.reading() {
                Reading::Bad => self.recovered = None,
                Reading::Good if self.recovered.is_none() => {
                    let w = self
                        .rows
                        .iter()
                        .find(|r| r.1 + r.2 > 0)
                        .map_or(self.next, |r| r.0);
                    // Every row seen from W on is held: count them, later ones as they come.
                    let (started, succeeded) = self
                        .rows
                        .iter()
                        .filter(|r| r.0 >= w)
                        .fold((0, 0), |(c, s), r| (c + r.3, s + r.1));
                    self.recovered = Some((w, started, succeeded));
                }
                _ => {}
            }
            self.next += 1;
        }
    }

    /// Judges the next row written (rows come in window order; missing ones are quiet).
    #[inline]
    pub fn see(&mut self, row: &SeriesRow) {
        self.seen_end = row.window + 1;
        if row.window < self.first {
            return;
        }
        let failed = row.timed_out + row.refused;
        if !self.closed {
            self.read_until((row.window + 1).saturating_sub(self.hold));
            match self.stop {
                Some(stop) if row.window >= stop => {
                    self.read_until(u64::MAX);
                    self.closed = true;
                }
                _ => {
                    self.rows
                        .push_back((row.window, row.succeeded, failed, row.calls_started));
                    self.sums.succeeded += row.succeeded;
                    self.sums.failed += failed;
                }
            }
        }
        if let Some((w, started, succeeded)) = &mut self.recovered {
            if row.window >= *w {
                *started += row.calls_started;
                *succeeded += row.succeeded;
            }
        }
    }

    /// Where the last row seen ends (zero before any).
    pub fn run_end(&self) -> SimTime {
        SimTime(self.seen_end.saturating_mul(self.bin))
    }

    /// The verdict once every row has been seen, the load having ended at `end`: W when the
    /// run recovered and kept it, `None` when it collapsed.
    pub fn at(&self, end: SimTime) -> Option<SimTime> {
        let mut done = self.clone();
        let stop = end.as_nanos().div_ceil(self.bin);
        if done.stop.is_none() {
            done.stop = Some(stop);
            // Rows at or after the end are in no stretch (a herd's end is past its last row).
            while let Some(&(w, ok, bad, _)) = done.rows.back() {
                if w < stop {
                    break;
                }
                done.sums.succeeded -= ok;
                done.sums.failed -= bad;
                done.rows.pop_back();
            }
        }
        let stop = done.stop.unwrap_or(stop);
        if !done.closed {
            done.read_until(u64::MAX);
        }
        if stop < self.first + self.hold {
            return None; // no stretch fits between the trigger's end and the end of the load
        }
        let (w, started, succeeded) = done.recovered?;
        (10 * succeeded >= 9 * started).then(|| SimTime(w * self.bin))
    }
}

/// The collapse verdict ([`verdict_rule`]): when the run reached the recovered state and kept
/// it to `end`, or `None` when it never did (collapsed). The stretches judged are every run of
/// `hold` consecutive windows starting at or after `after` (the last trigger's end) and ending
/// by `end`'s window boundary (the end of the load). After the last [bad](Reading::Bad)
/// stretch, the first [good](Reading::Good) one names `W`, its first window with an answer;
/// the run is recovered at `W` when, from `W` on, its successes (to the run's last window)
/// are at least 90 % of its calls started. No stretch fits (the load ends within `hold` of
/// the trigger): collapsed. Missing windows are quiet: they count neither way. Rows must be
/// in window order (the series is).
pub fn recovered_at(
    rows: &[SeriesRow],
    bin: SimDuration,
    after: SimTime,
    hold: u64,
    end: SimTime,
) -> Option<SimTime> {
    let bin = bin.as_nanos();
    let hold = hold.max(1);
    let first = after.as_nanos().div_ceil(bin);
    // Windows starting before `end`; stretches start at `first..=last`.
    let stop = end.as_nanos().div_ceil(bin);
    let last = stop.checked_sub(hold).filter(|&l| l >= first)?;
    let all_rows = rows;
    let rows: Vec<&SeriesRow> = rows
        .iter()
        .filter(|r| r.window >= first && r.window < stop)
        .collect();
    // The stretch's reading only changes where a row enters it (k = window - hold + 1) or
    // leaves it (k = window + 1): walk those starts, each reading holding until the next.
    let mut starts: Vec<u64> = rows
        .iter()
        .flat_map(|r| [(r.window + 1).saturating_sub(hold), r.window + 1])
        .chain([first])
        .filter(|&k| (first..=last).contains(&k))
        .collect();
    starts.sort_unstable();
    starts.dedup();
    let mut stretch = Stretch::default();
    let (mut entered, mut left) = (0, 0);
    let mut recovered = None;
    for k in starts {
        while entered < rows.len() && rows[entered].window < k + hold {
            stretch.add(rows[entered]);
            entered += 1;
        }
        while left < entered && rows[left].window < k {
            stretch.remove(rows[left]);
            left += 1;
        }
        match (stretch.reading(), recovered) {
            (Reading::Bad, _) => recovered = None,
            // The stretch's first window with an answer.
            (Reading::Good, None) => {
                recovered = rows[left..entered]
                    .iter()
                    .find(|r| r.succeeded + r.timed_out + r.refused > 0)
                    .map(|r| r.window)
            }
            _ => {}
        }
    }
    let w = recovered?;
    // Goodput keeps up with the calls started, from W to the end: successes counted through
    // the drain after the load, so only calls still pending at the run's end are missing.
    let (started, succeeded) = all_rows
        .iter()
        .filter(|r| r.window >= w)
        .fold((0u64, 0u64), |(c, s), r| {
            (c + r.calls_started, s + r.succeeded)
        });
    (10 * succeeded >= 9 * started).then(|| SimTime(w * bin))
}

/// The collapse verdict in one sentence, for a run whose recovery hold is `hold` and whose
/// load runs at least `settle` past its last trigger (what `boundary` prints as
/// `verdict_rule`).
pub fn verdict_rule(hold: SimDuration, settle: SimDuration) -> String {
    format!(
        "collapsed unless the run reaches and keeps the recovered state: calls keep starting \
         for at least {settle} after the last trigger ends (the settle: by default the longest a \
         call can last, (retries + 1) x timeout + retries x cap, each retry layer around the policy \
         repeating that call 1 + its retries times with its cap between, plus the hold), and \
         from some \
         window W at or after that end to the end of the load, every stretch of the recovery \
         hold ({hold}) of consecutive windows with answers has at most 10% timeouts and \
         refusals among them, the first such stretch after the last that has more starting at \
         W, and from W on the successes are at least 90% of the calls started (a herd's end: \
         its last window plus the hold, or the trigger's end plus the settle if later); \
         stretches without answers count neither way, so a herd whose calls all failed and \
         stopped is collapsed, while a run whose every call succeeded is recovered by the \
         last trigger's end at the latest; recovered_at_s is W, its first window with an answer"
    )
}
