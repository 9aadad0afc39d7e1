//! Compatibility facade: the paths of the old `load` module, which held
//! both the read and the check stages. Reading now lives in
//! [`crate::read`], checking in [`crate::check`]; new code uses those.
//! To be removed once the last caller has moved to the new paths.

pub use crate::check::{Checker, rule_diagnostics, shape_diagnostics, unchecked_model};
pub use crate::read::{
    LoadError, MAX_FILE_BYTES, Merged, Source, default_values, merge, merge_sources, parse_source,
    read_source, read_sources, read_yaml_file, set_source, split_set,
};
