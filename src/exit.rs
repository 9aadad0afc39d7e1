//! The exit codes of `asogen`, one place for every command and for the
//! configuration step before them.

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: the values or the check failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit code: bad usage or an I/O error.
pub const EXIT_USAGE: u8 = 2;
