//! The one YAML reader every YAML text asogen reads goes through
//! (`helm_values::yaml`, as asogen reads: its name in messages, its
//! secret names never quoted), and the writer every rendered file is
//! written with (`chart_template::emit`). Only the reader names a YAML
//! crate, so it can be swapped there alone.

use serde_json::Value;

use helm_values::yaml::Reader;
pub use helm_values::yaml::{
    LocatedDocument, MAX_DEPTH, MAX_NODES, MAX_YAML_BYTES, NodeSpan, Position, YamlError, YamlNote,
};

/// asogen's reader.
const READER: Reader = Reader {
    program: "asogen",
    is_secret: crate::diagnostics::is_secret_name,
};

/// A values file with positions ([`Reader::parse_document`]).
pub fn parse_document(source: &str) -> Result<LocatedDocument, YamlError> {
    READER.parse_document(source)
}

/// Every document of a stream, one at a time ([`Reader::for_each_document`]).
pub fn for_each_document<E: From<YamlError>>(
    source: &str,
    each: impl FnMut(usize, Value) -> Result<(), E>,
) -> Result<(), E> {
    READER.for_each_document(source, each)
}

/// A stream of Kubernetes objects ([`Reader::parse_stream`]).
pub fn parse_stream(source: &str) -> Result<Vec<Value>, YamlError> {
    READER.parse_stream(source)
}

/// A file of one document ([`Reader::parse_value`]).
pub fn parse_value(source: &str) -> Result<Value, YamlError> {
    READER.parse_value(source)
}

/// Where a node of a stream's document is ([`Reader::locate`]).
pub fn locate(source: &str, index: usize, pointer: &str) -> Option<Position> {
    READER.locate(source, index, pointer)
}

/// Writes a value as block YAML (used for every rendered file).
pub fn to_yaml(value: &impl serde::Serialize) -> String {
    let value = serde_json::to_value(value).expect("rendered data is JSON-shaped");
    chart_template::emit::to_yaml(&value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the writer writes, this reader reads back as the same value:
    /// both as a one-document file and as a values file with positions.
    fn reads_back(value: &serde_json::Value) {
        let text = to_yaml(value);
        let back = parse_value(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
        assert_eq!(&back, value, "read back:\n{text}");
        if value.is_object() {
            let located = parse_document(&text).unwrap();
            assert_eq!(
                &located.value, value,
                "the values reader reads back:\n{text}"
            );
        }
    }

    #[test]
    fn reads_back_what_the_writer_writes() {
        // Strings a YAML 1.1 reader could take for something else.
        for text in [
            "yes",
            "No",
            "on",
            "OFF",
            "y",
            "~",
            "null",
            "1e3",
            "0x1F",
            "0o17",
            "017",
            "1_000",
            "12:30",
            "2001-12-14",
            ".inf",
            "-.NaN",
            "<<",
            "- item",
            "a: b",
            "#x",
            "&a",
            "*a",
            "!t",
            "%x",
            "@x",
            "`x",
            "|",
            ">",
            "'q'",
            "\"q\"",
            " lead",
            "trail ",
            "a\nb",
            "\u{85}",
            "\u{feff}",
            "",
        ] {
            reads_back(&serde_json::json!({ "k": text, "list": [text] }));
        }
        // Every object asogen renders for the defaults.
        let model = crate::check::Checker::new()
            .check(&[], crate::model::DEFAULT_NAMESPACE)
            .unwrap();
        let install = crate::render::objects::Install::new(&model, crate::render::objects::ASOGEN);
        for object in install.objects() {
            reads_back(&object);
        }
    }
}
