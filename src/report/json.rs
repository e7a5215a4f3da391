//! JSON: `{"results": [...]}`, one object per strategy, pretty-printed, ending in a newline.

use super::{Exporter, ReportError};
use crate::experiment::Report;

/// Serialises the report as JSON.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ReportError> {
        let mut bytes =
            serde_json::to_vec_pretty(report).map_err(|e| ReportError(e.to_string()))?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}
