//! The lines of the series chart: what each shows ([`Measure`]), which panel holds which
//! ([`PanelKind`]), and the points of a line from the series' sparse rows ([`points`]), missing
//! windows read as zeros and a latency broken where a window has none. Pure: no drawing.

use crate::chart::palette;
use crate::series::SeriesRow;
use crate::time::SimDuration;

/// What a line of the chart shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// Calls started per second.
    Started,
    /// Successful answers per second (goodput).
    Succeeded,
    /// Attempts abandoned at their timeout per second.
    TimedOut,
    /// Refusals read per second.
    Refused,
    /// Requests in the server at the window's end.
    InSystem,
    /// Median latency of the window's successful attempts, seconds.
    P50,
    /// 99th percentile of the same.
    P99,
    /// Attempts sent per second by browser tabs visible when they sent.
    SentVisible,
    /// Attempts sent per second by browser tabs hidden when they sent.
    SentHidden,
}

impl Measure {
    /// The line colour, as RGB bytes (public so tests can find the lines in a picture).
    pub const fn rgb(self) -> (u8, u8, u8) {
        match self {
            Measure::Started => palette::RETRIES,
            Measure::Succeeded => palette::SERVED,
            Measure::TimedOut => palette::TIMED_OUT,
            Measure::Refused => palette::REFUSED,
            Measure::InSystem => palette::ORANGE,
            Measure::P50 => palette::SKY_BLUE,
            Measure::P99 => palette::BLACK,
            Measure::SentVisible => palette::BLUE,
            Measure::SentHidden => palette::ORANGE,
        }
    }

    /// The legend name.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Started => "started",
            Measure::Succeeded => "succeeded",
            Measure::TimedOut => "timed out",
            Measure::Refused => "refused",
            Measure::InSystem => "in the server",
            Measure::P50 => "p50",
            Measure::P99 => "p99",
            Measure::SentVisible => "by visible tabs",
            Measure::SentHidden => "by hidden tabs",
        }
    }

    /// The window's value in the panel's unit (per second for counts of events, seconds for
    /// latencies); `None` for a latency of a window without successes.
    pub(super) fn value(self, row: &SeriesRow, bin_s: f64) -> Option<f64> {
        let per_s = |n: u64| Some(n as f64 / bin_s);
        let secs = |ns: Option<u64>| ns.map(|ns| SimDuration(ns).as_secs_f64());
        match self {
            Measure::Started => per_s(row.calls_started),
            Measure::Succeeded => per_s(row.succeeded),
            Measure::TimedOut => per_s(row.timed_out),
            Measure::Refused => per_s(row.refused),
            Measure::InSystem => Some(row.in_system as f64),
            Measure::P50 => secs(row.latency_p50_ns),
            Measure::P99 => secs(row.latency_p99_ns),
            Measure::SentVisible => per_s(row.attempts - row.attempts_hidden),
            Measure::SentHidden => per_s(row.attempts_hidden),
        }
    }

    /// A window left out of the series is all zeros, and has no latency.
    fn missing_is_zero(self) -> bool {
        !matches!(self, Measure::P50 | Measure::P99)
    }

    pub(super) fn stroke(self) -> u32 {
        // Started is drawn wide under succeeded, so a healthy window (both equal) shows both.
        match self {
            Measure::Started => 5,
            _ => 2,
        }
    }
}

/// The three panels of a strategy's row, left to right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PanelKind {
    /// Calls started, succeeded, timed out and refused per second.
    Calls,
    /// Requests in the server.
    InSystem,
    /// p50 and p99 latency.
    Latency,
    /// Attempts sent by visible and by hidden browser tabs per second.
    Tabs,
}

impl PanelKind {
    /// The panels of a row, left to right.
    pub const ALL: [PanelKind; 3] = [PanelKind::Calls, PanelKind::InSystem, PanelKind::Latency];

    /// The panels of a row of a run with browser tabs: the attempts by the sending tab's
    /// visibility after the calls.
    pub const WITH_TABS: [PanelKind; 4] = [
        PanelKind::Calls,
        PanelKind::Tabs,
        PanelKind::InSystem,
        PanelKind::Latency,
    ];

    /// The lines of this panel, drawn in this order.
    pub fn measures(self) -> &'static [Measure] {
        match self {
            PanelKind::Calls => &[
                Measure::Started,
                Measure::Succeeded,
                Measure::TimedOut,
                Measure::Refused,
            ],
            PanelKind::InSystem => &[Measure::InSystem],
            PanelKind::Latency => &[Measure::P50, Measure::P99],
            PanelKind::Tabs => &[Measure::SentVisible, Measure::SentHidden],
        }
    }

    pub(super) fn heading(self, bin: SimDuration) -> String {
        match self {
            PanelKind::Calls => format!("calls per s ({bin} windows)"),
            PanelKind::InSystem => "requests in the server at each window's end".into(),
            PanelKind::Latency => "latency of successful attempts (s)".into(),
            PanelKind::Tabs => "attempts sent per s".into(),
        }
    }

    /// What an empty panel says in place of a value axis: nothing in any window to draw.
    pub(super) fn empty(self) -> &'static str {
        match self {
            PanelKind::Calls => "no calls",
            PanelKind::InSystem => "no request in the server in any window",
            PanelKind::Latency => "no successful attempt",
            PanelKind::Tabs => "no attempt",
        }
    }
}

/// The line of `measure` through `rows` (sparse, in window order), `group` windows a point,
/// over `windows` windows, as segments of (time s, value) points. Missing windows are zeros
/// for counts; for latencies a group without a value breaks the line (so a segment can be a
/// single point). O(rows), and at most about three points per group.
pub(crate) fn points(
    rows: &[SeriesRow],
    measure: Measure,
    bin: SimDuration,
    group: u64,
    windows: u64,
) -> Vec<Vec<(f64, f64)>> {
    let bin_s = bin.as_secs_f64();
    let groups = windows.div_ceil(group);
    // The centre of group k (the last may be partial).
    let x = |k: u64| {
        let start = k * group;
        let end = (start + group).min(windows);
        (start + end) as f64 / 2.0 * bin_s
    };
    // Each group's largest value, groups in order.
    let mut values: Vec<(u64, Option<f64>)> = Vec::new();
    for row in rows {
        let k = row.window / group;
        if k >= groups {
            break;
        }
        let v = measure.value(row, bin_s);
        match values.last_mut() {
            Some((last, held)) if *last == k => {
                *held = match (*held, v) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
            }
            _ => values.push((k, v)),
        }
    }
    let mut segments: Vec<Vec<(f64, f64)>> = Vec::new();
    if measure.missing_is_zero() {
        // One line over the whole axis: runs of missing groups are drawn at 0 (their first
        // and last group, which is enough for a straight line).
        let mut line = Vec::new();
        let mut next = 0u64; // the first group not yet drawn
        for &(k, v) in &values {
            if k > next {
                line.push((x(next), 0.0));
                if k - 1 > next {
                    line.push((x(k - 1), 0.0));
                }
            }
            line.push((x(k), v.unwrap_or(0.0)));
            next = k + 1;
        }
        if groups > next {
            line.push((x(next), 0.0));
            if groups - 1 > next {
                line.push((x(groups - 1), 0.0));
            }
        }
        segments.push(line);
    } else {
        let mut previous: Option<u64> = None;
        for &(k, v) in &values {
            let Some(v) = v else {
                previous = None;
                continue;
            };
            match (previous, segments.last_mut()) {
                (Some(p), Some(segment)) if p + 1 == k => segment.push((x(k), v)),
                _ => segments.push(vec![(x(k), v)]),
            }
            previous = Some(k);
        }
    }
    segments
}

#[cfg(test)]
mod tests {
    use super::super::tests::row;
    use super::*;

    const HALF_S: SimDuration = SimDuration::from_millis(500);

    #[test]
    fn missing_windows_are_zeros_for_counts_and_breaks_for_latency() {
        // Windows of 0.5 s: 0, 1 and 5 written, 8 on the axis. Counts per second are twice the
        // counts; windows 2..=4 and 6..=7 are zeros (their first and last centres).
        let rows = [row(0, 3, Some(1)), row(1, 4, None), row(5, 1, Some(2))];
        let started = points(&rows, Measure::Started, HALF_S, 1, 8);
        assert_eq!(
            started,
            [vec![
                (0.25, 6.0),
                (0.75, 8.0),
                (1.25, 0.0),
                (2.25, 0.0),
                (2.75, 2.0),
                (3.25, 0.0),
                (3.75, 0.0)
            ]]
        );
        // Latency: window 0 alone (window 1 has none), then window 5 alone: two dots, no line
        // through the windows between, no zero.
        let p50 = points(&rows, Measure::P50, HALF_S, 1, 8);
        assert_eq!(p50, [vec![(0.25, 1e-9)], vec![(2.75, 2e-9)]]);
        // Consecutive windows with latencies make one line.
        let rows = [row(3, 1, Some(5)), row(4, 1, Some(7))];
        assert_eq!(
            points(&rows, Measure::P99, HALF_S, 1, 5),
            [vec![(1.75, 5e-9), (2.25, 7e-9)]]
        );
    }

    #[test]
    fn groups_keep_their_largest_value_and_empty_series_are_one_zero_line() {
        // Groups of 3 windows of 1 s over 7 windows: [0,3), [3,6), [6,7) centred at 1.5, 4.5
        // and 6.5; the first holds 2 and 9 (9 shown), the second nothing, the third 4.
        let rows = [row(0, 2, None), row(2, 9, None), row(6, 4, None)];
        let second = SimDuration::from_secs(1);
        assert_eq!(
            points(&rows, Measure::Started, second, 3, 7),
            [vec![(1.5, 9.0), (4.5, 0.0), (6.5, 4.0)]]
        );
        assert_eq!(
            points(&[], Measure::Started, second, 1, 4),
            [vec![(0.5, 0.0), (3.5, 0.0)]]
        );
        assert!(points(&[], Measure::P99, second, 1, 4).is_empty());
    }
}
