//! A CSV file held as text cells under its header, for plotting: any CSV with a header row
//! reads, whatever its columns (a sweep's, a run's `--format csv`, a spreadsheet export).
//! Columns are looked up by name, and an unknown name is refused with the list of the
//! columns the file has. Parsing only: no I/O (the caller reads the bytes).

use std::collections::HashSet;
use std::hash::Hash;

use super::ChartError;

/// A CSV table: the header and the rows as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataTable {
    /// What to call the table in messages (the file name).
    pub source_name: String,
    /// Column names, in file order.
    pub columns: Vec<String>,
    /// Data rows, each as long as `columns`.
    pub rows: Vec<Vec<String>>,
}

impl DataTable {
    /// Parses CSV `bytes` whose first record is the header; `source_name` names it in errors.
    /// Rows of the wrong length, an empty header or duplicate column names are refused.
    pub fn parse(bytes: &[u8], source_name: &str) -> Result<DataTable, ChartError> {
        let fail = |message: String| ChartError::Csv {
            source_name: source_name.to_string(),
            message,
        };
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
        if crate::sniff::looks_like_toml(&text) {
            return Err(fail(
                "this is a TOML file (a scenario: run it with `herd-sim --config FILE`), not a CSV; \
                 plot draws a CSV with a header row, such as `herd-sim sweep ... --out sweep.csv` writes"
                    .into(),
            ));
        }
        if crate::sniff::looks_like_json(&text) {
            return Err(fail(
                "this is a JSON file, not a CSV; plot draws a CSV with a header row, such as \
                 `herd-sim sweep ... --out sweep.csv` writes (a run writes one with --format csv)"
                    .into(),
            ));
        }
        let mut reader = ::csv::ReaderBuilder::new()
            .has_headers(true)
            .trim(::csv::Trim::All)
            .from_reader(bytes);
        let columns: Vec<String> = reader
            .headers()
            .map_err(|e| fail(e.to_string()))?
            .iter()
            .map(str::to_string)
            .collect();
        if columns.iter().all(String::is_empty) {
            return Err(fail(
                "no header row; the first line must name the columns".into(),
            ));
        }
        if let Some((i, name)) = columns
            .iter()
            .enumerate()
            .find(|(_, name)| name.chars().any(char::is_control))
        {
            return Err(fail(format!(
                "column {} of the header, `{}`, holds a line break or control character; column names must be plain text",
                i + 1,
                plain(name)
            )));
        }
        if let Some(name) = first_repeat(&columns) {
            return Err(fail(format!("column `{name}` appears twice in the header")));
        }
        let mut rows = Vec::new();
        for record in reader.records() {
            let record = record.map_err(|e| fail(e.to_string()))?;
            rows.push(record.iter().map(str::to_string).collect());
        }
        if rows.is_empty() {
            return Err(fail("no data rows under the header".into()));
        }
        Ok(DataTable {
            source_name: source_name.to_string(),
            columns,
            rows,
        })
    }

    /// The index of column `name`; `field` is the flag that named it, for the error, which
    /// suggests the likely intent (`peak_mean` for `peak` in an `--aggregate` file, `clients`
    /// for `client`).
    pub fn column(&self, field: &'static str, name: &str) -> Result<usize, ChartError> {
        self.columns
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| ChartError::UnknownColumn {
                field,
                name: plain(name),
                source_name: self.source_name.clone(),
                hint: match self.suggest(name) {
                    Some(column) => format!(" (did you mean `{column}`?)"),
                    None => String::new(),
                },
                columns: self.column_list(),
            })
    }

    /// The column names for a message: the first [`LISTED_COLUMNS`], then how many more.
    pub fn column_list(&self) -> String {
        let mut list = self.columns[..self.columns.len().min(LISTED_COLUMNS)].join(", ");
        if self.columns.len() > LISTED_COLUMNS {
            list.push_str(&format!(
                ", and {} more",
                self.columns.len() - LISTED_COLUMNS
            ));
        }
        list
    }

    /// The column most likely meant by an unknown `name`: its `_mean` (an `--aggregate` file
    /// summarises each metric as `NAME_mean`, `NAME_sd`, ...), the same name in another case,
    /// or a name at most a third of its letters away (one edit for short names). One pass over
    /// the columns.
    fn suggest(&self, name: &str) -> Option<&str> {
        let mean = format!("{name}_mean");
        if let Some(c) = self.columns.iter().find(|c| **c == mean) {
            return Some(c);
        }
        if let Some(c) = self.columns.iter().find(|c| c.eq_ignore_ascii_case(name)) {
            return Some(c);
        }
        let limit = (name.chars().count() / 3).max(1);
        self.columns
            .iter()
            .filter(|c| c.chars().count().abs_diff(name.chars().count()) <= limit)
            .map(|c| (edit_distance(name, c), c))
            .filter(|(d, _)| *d <= limit)
            .min_by_key(|(d, _)| *d)
            .map(|(_, c)| c.as_str())
    }

    /// The number in column `column` of data row `row` (0-based); `field` names the flag.
    pub fn number(
        &self,
        field: &'static str,
        row: usize,
        column: usize,
    ) -> Result<f64, ChartError> {
        let text = &self.rows[row][column];
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(ChartError::NotNumeric {
                field,
                column: self.columns[column].clone(),
                row: row + 1,
                value: plain(text),
            }),
        }
    }
}

/// `text` for a one-line message: control characters (a line break in a quoted cell) escaped
/// as `\n`, `\u{0}`; everything else as it is.
pub fn plain(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Columns named in full in a message; a longer header is cut with a count.
pub const LISTED_COLUMNS: usize = 40;

/// Levenshtein distance between two short names (by characters): columns here, and the
/// command line's flags (whether clap's nearest flag is a likely slip). Names are short; the
/// callers only compare names whose lengths differ by a few characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The first item equal to an earlier one, in one pass with a hash set: linear in the
/// number of items (a header of 100 000 columns is checked in milliseconds, not the
/// 5 × 10^9 comparisons of a pairwise check).
fn first_repeat<T: Hash + Eq>(items: &[T]) -> Option<&T> {
    let mut seen = HashSet::with_capacity(items.len());
    items.iter().find(|item| !seen.insert(*item))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_any_header_and_refuses_unknown_columns_with_the_list() {
        let t = DataTable::parse(b"a, b ,c\n1,2,3\n4,5,x\n", "t.csv").unwrap();
        assert_eq!(t.columns, ["a", "b", "c"]);
        assert_eq!(t.column("--y", "b").unwrap(), 1);
        assert_eq!(t.number("--y", 1, 1).unwrap(), 5.0);
        let e = t.column("--x", "dd").unwrap_err().to_string();
        assert_eq!(e, "invalid --x: no column `dd` in t.csv; columns: a, b, c");
        let e = t.number("--y", 1, 2).unwrap_err().to_string();
        assert!(
            e.contains("`c`") && e.contains("row 2") && e.contains("`x`"),
            "{e}"
        );
    }

    #[test]
    fn unknown_columns_suggest_the_likely_intent() {
        let t = DataTable::parse(
            b"clients,strategy,seeds,peak_mean,peak_sd,span_s_mean\n1,a,2,3,4,5\n",
            "agg.csv",
        )
        .unwrap();
        let hint = |name: &str| match t.column("--y", name).unwrap_err() {
            ChartError::UnknownColumn { hint, .. } => hint,
            other => panic!("{other}"),
        };
        assert_eq!(hint("peak"), " (did you mean `peak_mean`?)");
        assert_eq!(hint("span_s"), " (did you mean `span_s_mean`?)");
        assert_eq!(hint("client"), " (did you mean `clients`?)");
        assert_eq!(hint("Strategy"), " (did you mean `strategy`?)");
        assert_eq!(hint("stratgey"), " (did you mean `strategy`?)");
        assert_eq!(hint("total"), "");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        // A wide header is listed in part, with a count.
        let wide: Vec<String> = (0..45).map(|i| format!("c{i}")).collect();
        let text = format!("{}\n{}\n", wide.join(","), vec!["1"; 45].join(","));
        let t = DataTable::parse(text.as_bytes(), "w.csv").unwrap();
        let e = t.column("--x", "zzzz").unwrap_err().to_string();
        assert!(e.ends_with(", c38, c39, and 5 more"), "{e}");
    }

    /// A name that counts how often it is compared for equality.
    struct Counted<'a>(u32, &'a std::cell::Cell<u64>);

    impl Hash for Counted<'_> {
        fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
            self.0.hash(state);
        }
    }

    impl PartialEq for Counted<'_> {
        fn eq(&self, other: &Self) -> bool {
            self.1.set(self.1.get() + 1);
            self.0 == other.0
        }
    }
    impl Eq for Counted<'_> {}

    #[test]
    fn the_duplicate_check_is_linear_in_the_columns() {
        // A pairwise check makes n (n - 1) / 2 comparisons, 5 × 10^7 for
        // these 10 000 distinct names; a hash set compares only on a hash collision.
        let compared = std::cell::Cell::new(0);
        let n = 10_000u32;
        let mut names: Vec<Counted> = (0..n).map(|i| Counted(i, &compared)).collect();
        assert!(first_repeat(&names).is_none());
        assert!(
            compared.get() <= u64::from(n),
            "{} comparisons",
            compared.get()
        );
        names.push(Counted(4321, &compared));
        compared.set(0);
        assert_eq!(first_repeat(&names).map(|c| c.0), Some(4321));
        assert!(
            compared.get() <= u64::from(n) + 1,
            "{} comparisons",
            compared.get()
        );
    }

    #[test]
    fn a_header_of_100k_columns_reads_and_names_its_repeat() {
        let mut header: Vec<String> = (0..100_000).map(|i| format!("c{i}")).collect();
        let row = vec!["1"; header.len()].join(",");
        let t =
            DataTable::parse(format!("{}\n{row}\n", header.join(",")).as_bytes(), "w.csv").unwrap();
        assert_eq!(t.columns.len(), 100_000);
        assert_eq!(t.column("--y", "c99999").unwrap(), 99_999);
        header.push("c77".into());
        let e = DataTable::parse(
            format!("{}\n{row},1\n", header.join(",")).as_bytes(),
            "w.csv",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "w.csv: column `c77` appears twice in the header"
        );
        // With no data rows, the refusal says so (the case once measured at 21 s).
        header.pop();
        let e =
            DataTable::parse(format!("{}\n", header.join(",")).as_bytes(), "w.csv").unwrap_err();
        assert_eq!(e.to_string(), "w.csv: no data rows under the header");
    }

    #[test]
    fn a_toml_or_json_file_is_named_as_such() {
        let toml = include_bytes!("../../configs/herd-down.toml");
        let e = DataTable::parse(toml, "herd-down.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("herd-down.toml: this is a TOML file") && e.contains("--config"),
            "{e}"
        );
        let json = include_bytes!("../../configs/scenarios.json");
        let e = DataTable::parse(json, "s.json").unwrap_err().to_string();
        assert!(e.starts_with("s.json: this is a JSON file"), "{e}");
    }

    #[test]
    fn refuses_ragged_duplicate_or_empty_files() {
        assert!(DataTable::parse(b"a,b\n1,2,3\n", "t").is_err());
        assert!(DataTable::parse(b"a,a\n1,2\n", "t").is_err());
        assert!(DataTable::parse(b"a,b\n", "t").is_err());
        assert!(DataTable::parse(b"", "t").is_err());
    }
}
