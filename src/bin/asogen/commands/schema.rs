//! `asogen schema`: prints `values.schema.json`, the same bytes the chart
//! ships.

use std::io::Write;

use super::Status;
use asogen::output::Stdout;

/// Prints the published schema.
pub fn run<W: Write>(stdout: &mut Stdout<W>) -> Status {
    stdout.print(asogen::schema::published_schema_text());
    Status::Success
}
