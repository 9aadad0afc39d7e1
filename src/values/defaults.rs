//! Struct fields with their defaults beside them.
//!
//! Rust's default field values (RFC 3681, `pub enable: bool = true,`) are
//! not stable yet. [`values_struct!`] takes a struct written that way and
//! emits the struct without the defaults, plus its `impl Default`; a field
//! without `= EXPR` gets `Default::default()`, as the RFC's
//! `#[derive(Default)]` gives it. Every attribute (docs, derives, serde,
//! schemars) passes through as written, so the schema is what the struct
//! alone derives. When the feature is stable, dropping the macro call and
//! adding `Default` to the derives is the whole migration.

/// A values struct with each field's default written beside it (see the
/// module's doc).
macro_rules! values_struct {
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$field_attr:meta])*
                $field_vis:vis $field:ident : $ty:ty $(= $default:expr)?
            ),* $(,)?
        }
    ) => {
        $(#[$attr])*
        $vis struct $name {
            $(
                $(#[$field_attr])*
                $field_vis $field: $ty,
            )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self {
                    $($field: values_struct!(@default $($default)?),)*
                }
            }
        }
    };
    (@default) => {
        Default::default()
    };
    (@default $default:expr) => {
        $default
    };
}

pub(crate) use values_struct;

#[cfg(test)]
mod tests {
    values_struct! {
        /// A struct of the three kinds of field.
        #[derive(Debug, PartialEq)]
        struct Sample {
            /// Written.
            written: u8 = 7,
            /// Left to its type.
            unwritten: Vec<u8>,
            computed: String = "a".repeat(2),
        }
    }

    #[test]
    fn fields_get_their_written_default_or_their_type_s() {
        assert_eq!(
            Sample::default(),
            Sample {
                written: 7,
                unwritten: Vec::new(),
                computed: "aa".into(),
            }
        );
    }
}
