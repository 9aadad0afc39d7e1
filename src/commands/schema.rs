//! `asogen schema`: prints `values.schema.json`, the same bytes the chart
//! ships.

use std::io::Write;

use super::Status;
use crate::output::Stdout;

/// Prints the published schema.
pub fn run<W: Write>(stdout: &mut Stdout<W>) -> Status {
    stdout.print(crate::schema::published_schema_text());
    Status::Success
}
