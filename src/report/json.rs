//! JSON: `{"results": [...]}`, one object per strategy, pretty-printed, ending in a newline.
//! Its histograms are dense (a line a window), so its buffer is reserved fallibly: a report
//! too big for memory is an error naming its windows, not an abort.

use super::{Exporter, ReportError};
use crate::config::human_bytes;
use crate::experiment::Report;

/// Bytes a histogram window takes at least once pretty-printed: eight spaces of indent, a
/// digit, a comma and a newline.
const MIN_WINDOW_BYTES: u64 = 11;

/// Serialises the report as JSON.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ReportError> {
        let windows: u64 = report
            .results
            .iter()
            .map(|r| {
                [&r.histogram, &r.histogram_served, &r.histogram_refused]
                    .iter()
                    .map(|h| h.len() as u64)
                    .sum::<u64>()
            })
            .sum();
        let at_least = windows.saturating_mul(MIN_WINDOW_BYTES);
        let too_big = || {
            ReportError(format!(
                "its histograms have {windows} windows, at least {} of JSON, which the system \
                 refused to allocate; widen --bin or use --format csv",
                human_bytes(at_least)
            ))
        };
        let mut buffer = Fallible(Vec::new());
        usize::try_from(at_least)
            .ok()
            .and_then(|n| buffer.0.try_reserve_exact(n).ok())
            .ok_or_else(too_big)?;
        serde_json::to_writer_pretty(&mut buffer, report).map_err(|e| {
            if e.io_error_kind() == Some(std::io::ErrorKind::OutOfMemory) {
                too_big()
            } else {
                ReportError(e.to_string())
            }
        })?;
        let mut bytes = buffer.0;
        bytes.try_reserve(1).map_err(|_| too_big())?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

/// A byte buffer grown with `try_reserve`: running out of memory is an I/O error.
struct Fallible(Vec<u8>);

impl std::io::Write for Fallible {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .try_reserve(bytes.len())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::OutOfMemory, e))?;
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
