//! A run's page: the scenario in words; the summary table, built from the run's JSON output
//! (the same text, cell for cell: [`summary_rows`]); every chart; for runs of up to
//! [`TIMELINE_CLIENTS_MAX`] clients, a per-client timeline (each attempt of a chosen client:
//! sent, answered or timed out, waited), drawn for client 0 of the first strategy in the page
//! itself and redrawn for the client picked by a small inline script (the page reads the same
//! with scripts off); and what reproduces the run: the command, the seed and the scenario as a
//! config file. The run's JSON output and its attempts (the lines `--trace` writes) are
//! embedded as data blocks.
//!
//! Served is the palette's bluish green, refused vermillion, timed out reddish purple,
//! retries (the waits) blue ([`crate::chart::palette`]).

use std::fmt::Write;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::boundary::cell;
use super::{coloured, escape, Skeleton};
use crate::chart::palette;

/// The most clients a run may have for the page to carry its per-client timeline.
pub const TIMELINE_CLIENTS_MAX: u32 = 5000;

/// The most attempts (estimated) a run may make for the page to carry its timeline: about
/// 200 bytes a line, so the page stays under ~20 MB.
pub const TIMELINE_ATTEMPTS_MAX: u128 = 100_000;

/// What a page shows.
#[derive(Clone, Debug, Default)]
pub struct HtmlPage<'a> {
    /// The page's heading.
    pub title: &'a str,
    /// The scenario in words (the table output's first line).
    pub words: &'a str,
    /// The run's JSON output (`--format json`), whose `results` the summary shows.
    pub json: &'a str,
    /// The charts, SVG documents.
    pub charts: Vec<Vec<u8>>,
    /// The attempts of replicate 0 of each strategy, as `--trace` writes them (JSON lines);
    /// `None` when the run is too large for a timeline.
    pub attempts: Option<&'a str>,
    /// The command that reproduces the run.
    pub command: &'a str,
    /// The master seed.
    pub seed: u64,
    /// The scenario as a config file (TOML).
    pub config: &'a str,
}

/// A JSON object with its keys in the order written (serde_json's map sorts them), each value
/// kept as its own text.
struct Ordered(Vec<(String, Box<RawValue>)>);

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Ordered, M::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Box<RawValue>>()? {
                    entries.push(entry);
                }
                Ok(Ordered(entries))
            }
        }
        deserializer.deserialize_map(Keys)
    }
}

#[derive(serde::Deserialize)]
struct Results {
    results: Vec<Ordered>,
}

/// The summary table of a run's JSON output: its header (the scalar keys of the first
/// result, in order) and one row a result, each cell the value's own JSON text, never parsed
/// and written again (a float written again may move its last digit), strings bare and
/// `null` shown as `-` ([`cell`]). Arrays and objects (the histogram, the series) are left
/// to the charts.
pub fn summary_rows(json: &str) -> Result<(Vec<String>, Vec<Vec<String>>), serde_json::Error> {
    let parsed: Results = serde_json::from_str(json)?;
    let scalar = |v: &RawValue| !(v.get().starts_with('[') || v.get().starts_with('{'));
    let header: Vec<String> = parsed
        .results
        .first()
        .map(|r| {
            r.0.iter()
                .filter(|(_, v)| scalar(v))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    let rows = parsed
        .results
        .iter()
        .map(|r| {
            header
                .iter()
                .map(|key| cell(r.0.iter().find(|(k, _)| k == key).map(|(_, v)| &**v)))
                .collect()
        })
        .collect();
    Ok((header, rows))
}

/// One attempt of the timeline, from a trace line.
#[derive(serde::Deserialize)]
struct Line {
    run: u32,
    strategy: String,
    client: u32,
    attempt: u32,
    sent: f64,
    ended: f64,
    outcome: String,
    next: String,
    wait: Option<f64>,
}

/// The script that redraws the timeline for the picked client (or the one the address names,
/// `#client=N&run=R`). It builds the same markup as
/// [`timeline`] (kept equal by the Chromium check, scripts/html-chromium.sh).
const SCRIPT: &str = r##"
(function () {
  var block = document.getElementById("attempts");
  if (!block) { return; }
  var lines = block.textContent.split("\n").filter(function (l) { return l.trim() !== ""; }).map(JSON.parse);
  var picker = document.getElementById("picker");
  var client = document.getElementById("client");
  var run = document.getElementById("run");
  var view = document.getElementById("timeline");
  var colours = { served: "SERVED", refused: "REFUSED", timed_out: "TIMED_OUT" };
  function esc(t) { return String(t).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); }
  function num(x) { return x === null || x === undefined ? "-" : String(x); }
  function draw() {
    var c = Number(client.value), r = Number(run.value);
    var mine = lines.filter(function (a) { return a.client === c && a.run === r; });
    var span = Number(view.getAttribute("data-span")) || 1;
    var svg = '<svg xmlns="http://www.w3.org/2000/svg" width="800" height="40" viewBox="0 0 800 40" role="img" aria-label="attempts of client ' + c + '">';
    svg += '<line x1="0" y1="20" x2="800" y2="20" stroke="#bbb"/>';
    mine.forEach(function (a) {
      var x = 800 * a.sent / span, w = Math.max(2, 800 * (a.ended - a.sent) / span);
      if (a.wait !== null) { svg += '<line x1="' + (800 * a.ended / span).toFixed(1) + '" y1="20" x2="' + (800 * (a.ended + a.wait) / span).toFixed(1) + '" y2="20" stroke="RETRIES" stroke-dasharray="3 2"/>'; }
      svg += '<rect x="' + x.toFixed(1) + '" y="10" width="' + w.toFixed(1) + '" height="20" fill="' + colours[a.outcome] + '"/>';
    });
    svg += '</svg>';
    var table = '<table><thead><tr><th>attempt</th><th>sent s</th><th>ended s</th><th>outcome</th><th>next</th><th>wait s</th></tr></thead><tbody>';
    mine.forEach(function (a) {
      table += '<tr><td>' + a.attempt + '</td><td>' + num(a.sent) + '</td><td>' + num(a.ended) + '</td><td class="' + esc(a.outcome) + '">' + esc(a.outcome) + '</td><td>' + esc(a.next) + '</td><td>' + num(a.wait) + '</td></tr>';
    });
    table += '</tbody></table>';
    var strategy = mine.length ? mine[0].strategy : "";
    view.innerHTML = '<p id="shown">client ' + c + ' of ' + esc(strategy) + ': ' + mine.length + ' attempts</p>' + svg + table;
  }
  // `#client=N&run=R` picks a client from the address (a link to one client's attempts).
  function fromAddress() {
    var picked = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var pair = kv.split("=");
      if (pair.length === 2 && /^[0-9]+$/.test(pair[1])) { picked[pair[0]] = pair[1]; }
    });
    if (picked.client !== undefined) { client.value = picked.client; }
    if (picked.run !== undefined) { run.value = picked.run; }
    if (picked.client !== undefined || picked.run !== undefined) { draw(); }
  }
  picker.hidden = false;
  client.addEventListener("input", draw);
  run.addEventListener("change", draw);
  window.addEventListener("hashchange", fromAddress);
  fromAddress();
})();
"##;

/// A number as the script's `String(x)` writes it: whole numbers without a fraction, others
/// in their shortest round-trip form.
fn json_number(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// The timeline of client `client` of run `run`: a strip and a table, the markup the script
/// builds for a picked client.
fn timeline(lines: &[Line], run: u32, client: u32, span: f64) -> String {
    let mine: Vec<&Line> = lines
        .iter()
        .filter(|a| a.client == client && a.run == run)
        .collect();
    let colour = |o: &str| match o {
        "served" => palette::SERVED,
        "refused" => palette::REFUSED,
        _ => palette::TIMED_OUT,
    };
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"40\" viewBox=\"0 0 800 40\" \
         role=\"img\" aria-label=\"attempts of client {client}\">\
         <line x1=\"0\" y1=\"20\" x2=\"800\" y2=\"20\" stroke=\"#bbb\"/>"
    );
    for a in &mine {
        let x = 800.0 * a.sent / span;
        let w = (800.0 * (a.ended - a.sent) / span).max(2.0);
        if let Some(wait) = a.wait {
            let _ = write!(
                svg,
                "<line x1=\"{:.1}\" y1=\"20\" x2=\"{:.1}\" y2=\"20\" stroke=\"{}\" stroke-dasharray=\"3 2\"/>",
                800.0 * a.ended / span,
                800.0 * (a.ended + wait) / span,
                palette::hex(palette::RETRIES)
            );
        }
        let _ = write!(
            svg,
            "<rect x=\"{x:.1}\" y=\"10\" width=\"{w:.1}\" height=\"20\" fill=\"{}\"/>",
            palette::hex(colour(&a.outcome))
        );
    }
    svg.push_str("</svg>");
    let mut table = String::from(
        "<table><thead><tr><th>attempt</th><th>sent s</th><th>ended s</th><th>outcome</th>\
         <th>next</th><th>wait s</th></tr></thead><tbody>",
    );
    for a in &mine {
        let _ = write!(
            table,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"{o}\">{o}</td><td>{}</td><td>{}</td></tr>",
            a.attempt,
            json_number(a.sent),
            json_number(a.ended),
            escape(&a.next),
            a.wait.map_or("-".into(), json_number),
            o = escape(&a.outcome),
        );
    }
    table.push_str("</tbody></table>");
    let strategy = mine.first().map_or("", |a| a.strategy.as_str());
    format!(
        "<p id=\"shown\">client {client} of {}: {} attempts</p>{svg}{table}",
        escape(strategy),
        mine.len()
    )
}

/// The whole page.
pub fn render(page: &HtmlPage<'_>) -> Result<String, serde_json::Error> {
    let (header, rows) = summary_rows(page.json)?;
    let mut out = Skeleton::start(page.title);
    out.scenario(page.words);
    out.heading("Summary");
    out.table("summary", &header, &rows);
    out.charts(&page.charts);
    if let Some(attempts) = page.attempts {
        let lines: Vec<Line> = attempts
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()?;
        out.raw(&timeline_section(&lines));
        out.data("attempts", "application/x-ndjson", attempts);
    }
    out.reproduce(
        page.seed,
        page.command,
        "The scenario as a config file (<code>herd-sim --config scenario.toml</code> runs it):",
        page.config,
    );
    out.colophon("served bluish green, refused vermillion, timed out reddish purple, retries blue");
    out.data("run-json", "application/json", page.json);
    if page.attempts.is_some() {
        out.raw(&format!("<script>{}</script>\n", coloured(SCRIPT)));
    }
    Ok(out.finish())
}

/// The timeline's heading, key, picker and the view of client 0 of the first strategy.
fn timeline_section(lines: &[Line]) -> String {
    let mut out = String::new();
    let span = lines
        .iter()
        .map(|a| a.ended + a.wait.unwrap_or(0.0))
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let clients = lines.iter().map(|a| a.client).max().map_or(0, |c| c + 1);
    let mut runs: Vec<(u32, &str)> = Vec::new();
    for a in lines {
        if !runs.iter().any(|(r, _)| *r == a.run) {
            runs.push((a.run, a.strategy.as_str()));
        }
    }
    out.push_str(
        "<h2>Timeline of one client</h2>\n<p class=\"key\">Each attempt from its send to its \
         answer (at least 2 px wide): <span class=\"served\">■ served</span>\
         <span class=\"refused\">■ refused</span><span class=\"timed_out\">■ timed out</span>\
         <span class=\"retries\">- - the wait before the next attempt</span></p>\n",
    );
    out.push_str("<p id=\"picker\" hidden><label>strategy <select id=\"run\">");
    for (r, s) in &runs {
        let _ = write!(out, "<option value=\"{r}\">{}</option>", escape(s));
    }
    let _ = writeln!(
        out,
        "</select></label> <label>client <input id=\"client\" type=\"number\" min=\"0\" \
         max=\"{}\" value=\"0\"></label></p>",
        clients.saturating_sub(1)
    );
    let _ = writeln!(
        out,
        "<div id=\"timeline\" data-span=\"{}\">{}</div>",
        json_number(span),
        timeline(lines, runs.first().map_or(0, |r| r.0), 0, span)
    );
    let _ = writeln!(
        out,
        "<noscript><p>Scripts are off: the timeline shows client 0; every attempt is in the \
         data block below, as <code>--trace</code> writes it.</p></noscript>"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_keeps_the_json_order_and_text() {
        let json = r#"{"results":[{"strategy":"a","peak":9,"span_s":1.5,"last":null,"histogram":[1,2]},
                                  {"strategy":"b<","peak":50,"span_s":14.0,"last":3.25,"histogram":[]}]}"#;
        let (header, rows) = summary_rows(json).unwrap();
        assert_eq!(header, ["strategy", "peak", "span_s", "last"]);
        assert_eq!(rows, [["a", "9", "1.5", "-"], ["b<", "50", "14.0", "3.25"]]);
    }

    #[test]
    fn the_summary_shows_each_numbers_own_digits() {
        // Texts that a parsed and rewritten float changes: 0.1 + 0.2 at its shortest
        // (seventeen digits), a trailing zero, an exponent, an integer past u64 and the
        // smallest subnormal.
        let written = [
            "0.30000000000000004",
            "2.50",
            "1E3",
            "18446744073709551616",
            "5e-324",
            "-0.0",
        ];
        let json = format!(
            "{{\"results\":[{{{}}}]}}",
            written
                .iter()
                .enumerate()
                .map(|(i, w)| format!("\"k{i}\": {w}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let (header, rows) = summary_rows(&json).unwrap();
        assert_eq!(header, ["k0", "k1", "k2", "k3", "k4", "k5"]);
        assert_eq!(rows, [written]);
        // Written again from a parsed value, three of them would change.
        let again: Vec<String> = written
            .iter()
            .map(|w| {
                serde_json::from_str::<serde_json::Value>(w)
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            written.iter().zip(&again).filter(|(w, a)| w != a).count(),
            3,
            "{again:?}"
        );
    }

    #[test]
    fn a_clients_timeline_lists_its_attempts_in_order() {
        let text = "{\"run\":0,\"strategy\":\"exponential\",\"client\":1,\"call\":0,\"attempt\":0,\"sent\":0.0,\"arrived\":0.0,\"ended\":0.0,\"outcome\":\"refused\",\"next\":\"retry\",\"wait\":1.0,\"hidden\":null}\n\
                    {\"run\":0,\"strategy\":\"exponential\",\"client\":0,\"call\":0,\"attempt\":0,\"sent\":0.0,\"arrived\":0.0,\"ended\":0.0,\"outcome\":\"refused\",\"next\":\"gave_up\",\"wait\":null,\"hidden\":null}\n\
                    {\"run\":0,\"strategy\":\"exponential\",\"client\":1,\"call\":0,\"attempt\":1,\"sent\":1.0,\"arrived\":1.0,\"ended\":1.5,\"outcome\":\"served\",\"next\":\"done\",\"wait\":null,\"hidden\":null}\n";
        let lines: Vec<Line> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let view = timeline(&lines, 0, 1, 2.0);
        assert!(
            view.starts_with("<p id=\"shown\">client 1 of exponential: 2 attempts</p>"),
            "{view}"
        );
        // Attempt 1 spans 1.0 s to 1.5 s of 2 s: x 400, width 200; the wait 0 → 1 s dashed.
        assert!(
            view.contains("<rect x=\"400.0\" y=\"10\" width=\"200.0\""),
            "{view}"
        );
        assert!(view.contains("x1=\"0.0\" y1=\"20\" x2=\"400.0\""), "{view}");
        assert!(view.contains("<td>1</td><td>1</td><td>1.5</td><td class=\"served\">served</td><td>done</td><td>-</td>"), "{view}");
    }
}
