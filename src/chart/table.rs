//! A CSV file held as text cells under its header, for plotting: any CSV with a header row
//! reads, whatever its columns (a sweep's, a run's `--format csv`, a spreadsheet export).
//! Columns are looked up by name, and an unknown name is refused with the list of the
//! columns the file has. Parsing only: no I/O (the caller reads the bytes).

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
        for (i, name) in columns.iter().enumerate() {
            if columns[..i].contains(name) {
                return Err(fail(format!("column `{name}` appears twice in the header")));
            }
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

    /// The index of column `name`; `field` is the flag that named it, for the error.
    pub fn column(&self, field: &'static str, name: &str) -> Result<usize, ChartError> {
        self.columns
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| ChartError::UnknownColumn {
                field,
                name: name.to_string(),
                source_name: self.source_name.clone(),
                columns: self.columns.join(", "),
            })
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
                value: text.clone(),
            }),
        }
    }
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
        let e = t.column("--x", "d").unwrap_err().to_string();
        assert_eq!(e, "invalid --x: no column `d` in t.csv; columns: a, b, c");
        let e = t.number("--y", 1, 2).unwrap_err().to_string();
        assert!(
            e.contains("`c`") && e.contains("row 2") && e.contains("`x`"),
            "{e}"
        );
    }

    #[test]
    fn refuses_ragged_duplicate_or_empty_files() {
        assert!(DataTable::parse(b"a,b\n1,2,3\n", "t").is_err());
        assert!(DataTable::parse(b"a,a\n1,2\n", "t").is_err());
        assert!(DataTable::parse(b"a,b\n", "t").is_err());
        assert!(DataTable::parse(b"", "t").is_err());
    }
}
