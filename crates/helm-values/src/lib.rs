//! Helm's values, read as Helm reads them, in the pieces that depend on
//! nothing of asogen: the `--set` family's language ([`strvals`], Helm's
//! `pkg/strvals`), Helm's merges of values files and defaults
//! ([`merge`]), the one YAML reader, bounded, with positions, reading as
//! Helm does ([`yaml`]), how Helm types a plain YAML scalar ([`yaml11`]), and the
//! JSON pointers and dotted key paths that name a value in messages
//! ([`pointer`]). asogen's readers (files, where a key was set,
//! diagnostics) stand on these.

#![forbid(unsafe_code)]

pub mod merge;
pub mod pointer;
pub mod strvals;
pub mod yaml;
pub mod yaml11;
