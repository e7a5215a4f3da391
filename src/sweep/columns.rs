//! A sweep row's metric columns: the fields of [`Summary`] in declaration order, then the call
//! loop's ([`CALL_METRICS`]) and the browser tabs' ([`TAB_METRICS`]) where a sweep has them,
//! and one run's values for them, formatted as every CSV of herd-sim formats numbers.

use crate::metrics::{Summary, Tally};
use crate::time::SimDuration;

pub use crate::report::{call_metric_values, CALL_METRICS};

/// The metric columns a run with browser tabs adds (after the call loop's), in order: the
/// summary's tab counts, empty for a cell without tabs.
pub const TAB_METRICS: [&str; 4] = [
    "hidden_clients",
    "retries_while_hidden",
    "paused",
    "early_retries",
];

/// The metric columns: the fields of [`Summary`] in declaration order, so a metric added there
/// appears in every sweep without touching this module; `attempts` only when `attempts` (a
/// sweep with an `occ` cell), so that other sweeps keep their columns.
pub fn metric_names(attempts: bool) -> Vec<String> {
    let summary = Summary::with_attempts(&Tally::new(SimDuration::from_millis(100)), attempts);
    summary_line(&summary, true).unwrap_or_default()
}

/// The metric fields of one run, from [`Summary`]'s CSV serialisation, with fractional
/// numbers in the shortest form that reads back exactly (`1` rather than `1.0`), as in every
/// other CSV of herd-sim.
pub fn metric_values(summary: &Summary) -> Vec<String> {
    let fields = summary_line(summary, false).unwrap_or_default();
    fields
        .into_iter()
        .map(|field| {
            let fractional = field.contains(['.', 'e', 'E']);
            match field.parse::<f64>() {
                Ok(number) if fractional => number.to_string(),
                _ => field,
            }
        })
        .collect()
}

/// One line of a summary's CSV serialisation through the csv crate, split into fields: the
/// header when `header`, else the record (so a row does not serialise the header it drops).
///
/// The line is split here rather than read back with `csv::Reader`: building a reader builds
/// its parsing automaton, which was three quarters of a small sweep row's work.
fn summary_line(summary: &Summary, header: bool) -> Option<Vec<String>> {
    // A buffer of about a line: the default 8 KiB, zeroed for every row, was a fifth of this
    // function's instructions.
    let mut writer = csv::WriterBuilder::new()
        .has_headers(header)
        .buffer_capacity(512)
        .from_writer(Vec::new());
    writer.serialize(summary).ok()?;
    let bytes = writer.into_inner().ok()?;
    split_records(std::str::from_utf8(&bytes).ok()?)
        .into_iter()
        .next()
}

/// The records of CSV text as the csv crate writes it: fields split at commas, records at
/// `\n` (or `\r\n`), a quoted field's `""` read as `"` and its commas and line breaks kept.
fn split_records(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {}
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    records
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The csv crate's own reader is the reference.
    fn read_back(text: &str) -> Vec<Vec<String>> {
        csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(text.as_bytes())
            .records()
            .map(|r| r.unwrap().iter().map(String::from).collect())
            .collect()
    }

    #[test]
    fn split_records_reads_what_the_csv_writer_writes_as_the_csv_reader_does() {
        let rows: [&[&str]; 5] = [
            &["peak", "span_s", "last_success_s"],
            &["4000", "14.456", ""],
            &["a,b", "say \"hi\"", "two\nlines"],
            &["", "", ""],
            &["\r\n", "\"", ",,"],
        ];
        let mut writer = csv::Writer::from_writer(Vec::new());
        for row in rows {
            writer.write_record(row).unwrap();
        }
        let text = String::from_utf8(writer.into_inner().unwrap()).unwrap();
        let split = split_records(&text);
        assert_eq!(split, read_back(&text));
        let expected: Vec<Vec<String>> = rows
            .iter()
            .map(|row| row.iter().map(|f| f.to_string()).collect())
            .collect();
        assert_eq!(split, expected);
        // CRLF line ends and a last record with no line end.
        assert_eq!(split_records("a,b\r\nc,d"), read_back("a,b\r\nc,d"));
    }

    /// Each named value is the summary's field of that name, as its JSON form has it.
    #[test]
    fn a_summarys_values_are_its_fields_by_name() {
        let mut tally = Tally::new(SimDuration::from_millis(100));
        for _ in 0..3 {
            tally.request(crate::time::SimTime(250_000_000), true, false);
        }
        let summary = Summary::with_attempts(&tally, true);
        let header = summary_line(&summary, true).unwrap();
        let values = summary_line(&summary, false).unwrap();
        let json = serde_json::to_value(&summary).unwrap();
        let fields = json.as_object().unwrap();
        assert_eq!(header.len(), fields.len());
        assert_eq!(values.len(), header.len());
        for (name, value) in header.iter().zip(&values) {
            match &fields[name.as_str()] {
                serde_json::Value::Null => assert_eq!(value, "", "{name}"),
                number => assert_eq!(
                    value.parse::<f64>().unwrap(),
                    number.as_f64().unwrap(),
                    "{name}"
                ),
            }
        }
        assert_eq!(
            values[header.iter().position(|h| h == "peak").unwrap()],
            "3"
        );
    }
}
