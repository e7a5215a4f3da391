//! `report --check`: a fresh report against the committed one and the bands. Each figure gets
//! a verdict; a line a figure that changed or is out of its band, in words a reviewer reads
//! ("outage / full-jitter: goodput_pct 91.20 → 78.40, band 85–100: OUT"). Pure.

use super::markdown::{band_text, number, Committed};
use super::{Expected, Figure, PolicyReport};

/// The outcome of a check.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    /// One line a changed, new, gone or out-of-band figure, in report order (gone last).
    pub lines: Vec<String>,
    /// Figures outside their band (a tolerance counts against the committed value).
    pub broken: usize,
    /// Figures whose mean differs from the committed one, or that are new or gone.
    pub changed: usize,
    /// Figures checked.
    pub figures: usize,
}

/// Whether `figure` is inside its band; a tolerance needs the committed value (a figure
/// without one is inside).
pub fn inside(figure: &Figure, committed: Option<f64>) -> bool {
    match (figure.expected, committed) {
        (Some(Expected::Band { lo, hi }), _) => figure.mean >= lo && figure.mean <= hi,
        // The committed value is written to two decimals: half a hundredth of slack.
        (Some(Expected::Tolerance(t)), Some(c)) => (figure.mean - c).abs() <= t + 0.005,
        _ => true,
    }
}

/// The unit a metric's figures are said in, from its column's suffix: ` %` for `_pct`,
/// ` s` for `_s`, nothing otherwise.
pub fn unit(metric: &str) -> &'static str {
    if metric.ends_with("_pct") {
        " %"
    } else if metric.ends_with("_s") {
        " s"
    } else {
        ""
    }
}

/// Compares `report` with the figures of the committed report.
pub fn check(report: &PolicyReport, committed: &[Committed]) -> Checked {
    let mut lines = Vec::new();
    let (mut broken, mut changed) = (0, 0);
    let find = |f: &Figure| {
        committed
            .iter()
            .find(|c| c.scenario == f.scenario && c.policy == f.policy && c.metric == f.metric)
    };
    for f in &report.figures {
        let before = find(f).map(|c| c.mean);
        let ok = inside(f, before);
        // Compared as written: two decimals.
        let differs = before.is_none_or(|b| number(b) != number(f.mean));
        if !ok {
            broken += 1;
        }
        if differs {
            changed += 1;
        }
        if ok && !differs {
            continue;
        }
        let unit = unit(&f.metric);
        let was = before.map_or("(new)".to_string(), |b| format!("{}{unit}", number(b)));
        let band = match f.expected {
            Some(Expected::Tolerance(t)) => match before {
                Some(b) => format!("band {}–{}", number(b - t), number(b + t)),
                None => band_text(f.expected),
            },
            other => format!("band {}", band_text(other)),
        };
        lines.push(format!(
            "{} / {}: {} {} → {}{unit}, {band}{unit}: {}",
            f.scenario,
            f.policy,
            f.metric,
            was,
            number(f.mean),
            if ok { "ok" } else { "OUT" }
        ));
    }
    for c in committed {
        let kept = report
            .figures
            .iter()
            .any(|f| c.scenario == f.scenario && c.policy == f.policy && c.metric == f.metric);
        if !kept {
            changed += 1;
            lines.push(format!(
                "{} / {}: {} {}{} → (gone: no band of the report file names it)",
                c.scenario,
                c.policy,
                c.metric,
                number(c.mean),
                unit(&c.metric)
            ));
        }
    }
    Checked {
        lines,
        broken,
        changed,
        figures: report.figures.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::markdown::{committed_figures, render};
    use super::*;

    fn figure(scenario: &str, policy: &str, metric: &str, mean: f64, expected: Expected) -> Figure {
        Figure {
            scenario: scenario.into(),
            policy: policy.into(),
            metric: metric.into(),
            mean,
            min: mean - 1.0,
            max: mean + 1.0,
            expected: Some(expected),
        }
    }

    fn report(figures: Vec<Figure>) -> PolicyReport {
        PolicyReport {
            title: "t".into(),
            file: "r.toml".into(),
            seeds: 3,
            figures,
            pair_seeds: Vec::new(),
            scenarios: Vec::new(),
            policies: Vec::new(),
            charts: Vec::new(),
        }
    }

    #[test]
    fn a_hand_made_pair_of_reports_gives_the_reviewers_lines() {
        let band = Expected::Band {
            lo: 85.0,
            hi: 100.0,
        };
        let committed = report(vec![
            figure("outage", "full-jitter", "goodput_pct", 91.2, band),
            figure("outage", "exponential", "goodput_pct", 88.0, band),
            figure(
                "outage",
                "exponential",
                "peak",
                1000.0,
                Expected::Tolerance(50.0),
            ),
            figure(
                "spike",
                "full-jitter",
                "peak",
                12.0,
                Expected::Tolerance(2.0),
            ),
            figure("spike", "full-jitter", "attempts", 300.0, band),
        ]);
        let text = render(&committed);
        let committed = committed_figures(&text).unwrap();
        assert_eq!(committed.len(), 5);
        assert_eq!(committed[0].mean, 91.2);
        let fresh = report(vec![
            // Out of its band: 78.4 < 85.
            figure("outage", "full-jitter", "goodput_pct", 78.4, band),
            // Unchanged, inside: no line.
            figure("outage", "exponential", "goodput_pct", 88.0, band),
            // Changed within its tolerance (1000 ± 50): a line, ok.
            figure(
                "outage",
                "exponential",
                "peak",
                1049.0,
                Expected::Tolerance(50.0),
            ),
            // Changed past its tolerance (12 ± 2).
            figure(
                "spike",
                "full-jitter",
                "peak",
                14.5,
                Expected::Tolerance(2.0),
            ),
            // New.
            figure(
                "spike",
                "exponential",
                "peak",
                3.0,
                Expected::Tolerance(2.0),
            ),
        ]);
        let checked = check(&fresh, &committed);
        assert_eq!(
            checked.lines,
            [
                "outage / full-jitter: goodput_pct 91.20 % → 78.40 %, band 85–100 %: OUT",
                "outage / exponential: peak 1000.00 → 1049.00, band 950.00–1050.00: ok",
                "spike / full-jitter: peak 12.00 → 14.50, band 10.00–14.00: OUT",
                "spike / exponential: peak (new) → 3.00, committed ± 2: ok",
                "spike / full-jitter: attempts 300.00 → (gone: no band of the report file names it)",
            ]
        );
        assert_eq!(
            (checked.broken, checked.changed, checked.figures),
            (2, 5, 5)
        );
        // The same report against itself: nothing to say.
        let same = check(&report(vec![figure("a", "b", "peak", 5.0, band)]), &[]);
        assert_eq!(same.broken, 1);
        let itself = render(&fresh);
        let again = check(&fresh, &committed_figures(&itself).unwrap());
        // Only the figure out of its band is said; 14.5 is its own committed value.
        assert_eq!((again.broken, again.changed), (1, 0));
        assert_eq!(
            again.lines,
            ["outage / full-jitter: goodput_pct 78.40 % → 78.40 %, band 85–100 %: OUT"]
        );
    }

    #[test]
    fn band_edges_are_inside() {
        let band = Expected::Band {
            lo: 85.0,
            hi: 100.0,
        };
        for (mean, ok) in [(85.0, true), (100.0, true), (84.99, false), (100.01, false)] {
            assert_eq!(
                inside(&figure("a", "b", "m", mean, band), None),
                ok,
                "{mean}"
            );
        }
    }
}
