//! Go's readings that asogen must share with the Go programs around it:
//! Helm reads integers with `strconv.ParseInt` ([`strconv`]) and matches
//! `--show-only` patterns with `filepath.Match` ([`filepath`]); ASO's
//! manager reads its arguments with package `flag` ([`flag`]). Each is one
//! small module with no dependency, kept apart from asogen so that what Go
//! means stays separate from what asogen decides.

#![forbid(unsafe_code)]

pub mod filepath;
pub mod flag;
pub mod strconv;
