//! Labels and annotations as the API server checks them: every values map
//! the chart writes into an object's metadata ([`METADATA_VALUES`]) gets
//! the API server's key and value checks ([`crate::names`]), so no install
//! is left half applied by an object the API server refuses; and the pod
//! labels must leave the Deployment's selector labels alone.

use serde_json::Value;

use crate::diagnostics::Diagnostic;
use crate::metadata::{METADATA_VALUES, MetadataKind, MetadataValues};
use crate::names::{
    ANNOTATIONS_MAX_BYTES, annotation_key_problems, annotations_bytes, label_key_problems,
    label_value_problems,
};
use crate::read::Merged;
use helm_values::pointer::{escape_segment, to_key_path};

use crate::names::metadata_codes::{
    ANNOTATION_KEY, ANNOTATIONS_SIZE, LABEL_KEY, LABEL_VALUE, SELECTOR_LABEL,
};

/// One diagnostic per key or value the API server would refuse, and per
/// selector label the values would change, at the key in the file that
/// set it. Values that are not strings are the shape check's to report.
pub fn label_diagnostics(merged: &Merged) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for map in METADATA_VALUES {
        let pointer = map.key.pointer();
        if let Some(Value::Object(entries)) = merged.value.pointer(&pointer) {
            check_map(merged, &map, &pointer, entries, &mut out);
        }
    }
    out
}

fn check_map(
    merged: &Merged,
    map: &MetadataValues,
    pointer: &str,
    entries: &serde_json::Map<String, Value>,
    out: &mut Vec<Diagnostic>,
) {
    let selector = map.selector;
    for (key, value) in entries {
        let Some(value) = value.as_str() else {
            continue;
        };
        let child = format!("{pointer}/{}", escape_segment(key));
        let (code, problems) = match map.kind {
            MetadataKind::Labels => (LABEL_KEY, label_key_problems(key)),
            MetadataKind::Annotations => (ANNOTATION_KEY, annotation_key_problems(key)),
        };
        if !problems.is_empty() {
            let mut d = merged.diagnostic(&child, true);
            d.keyword = Some(code.into());
            d.message = format!(
                "{} key {key:?} is not a valid {} key: {}",
                map.key.path(),
                kind_word(map.kind),
                problems.join("; ")
            );
            d.help = Some(format!(
                "the API server refuses it in {}; write an optional DNS subdomain prefix and '/', then at most {} letters, digits, '-', '_' or '.' starting and ending with a letter or digit, e.g. `example.com/team`",
                map.lands_on(),
                crate::names::KEY_NAME_MAX
            ));
            out.push(d);
        }
        if let Some((_, fixed)) = selector.iter().find(|(name, _)| *name == key) {
            let mut d = merged.diagnostic(&child, true);
            d.keyword = Some(SELECTOR_LABEL.into());
            d.message = format!(
                "{}.{key} is a selector label of the Deployment (the chart sets `{key}: {fixed}`): another value leaves the Deployment's selector matching none of its pods, which the API server refuses, and the Services selecting nothing",
                map.key.path()
            );
            d.help = Some(format!(
                "remove `{key}` from {}; the chart sets it, and a Deployment's selector cannot change",
                map.key.path()
            ));
            out.push(d);
        }
        if map.kind == MetadataKind::Labels {
            let problems = label_value_problems(value);
            if !problems.is_empty() {
                let mut d = merged.diagnostic(&child, false);
                d.keyword = Some(LABEL_VALUE.into());
                let shown = if merged.hides_value(&child) {
                    String::new()
                } else {
                    format!(" {value:?}")
                };
                d.message = format!(
                    "{} value{shown} is not a valid label value: {}",
                    to_key_path(&child),
                    problems.join("; ")
                );
                d.help = Some(format!(
                    "the API server refuses it in {}; write at most {} letters, digits, '-', '_' or '.' starting and ending with a letter or digit, or an empty string",
                    map.lands_on(),
                    crate::names::LABEL_VALUE_MAX
                ));
                out.push(d);
            }
        }
    }
    if map.kind == MetadataKind::Annotations {
        // The object carries the chart's own entries too, unless replaced.
        let chart_own = map
            .written
            .iter()
            .filter(|(key, _)| !entries.contains_key(*key))
            .map(|(key, value)| (*key, *value));
        let values = entries
            .iter()
            .filter_map(|(key, value)| Some((key.as_str(), value.as_str()?)));
        let size = annotations_bytes(chart_own.chain(values));
        if size > ANNOTATIONS_MAX_BYTES {
            let mut d = merged.diagnostic(pointer, true);
            d.keyword = Some(ANNOTATIONS_SIZE.into());
            d.message = format!(
                "{} make {} {size} bytes (keys and values), more than the {ANNOTATIONS_MAX_BYTES} the API server takes",
                map.key.path(),
                map.lands_on()
            );
            d.help =
                Some("keep large data out of annotations (a ConfigMap or Secret holds it)".into());
            out.push(d);
        }
    }
}

fn kind_word(kind: MetadataKind) -> &'static str {
    match kind {
        MetadataKind::Labels => "label",
        MetadataKind::Annotations => "annotation",
    }
}

#[cfg(test)]
mod tests {
    use crate::check::check_text as check;

    fn codes(text: &str) -> Vec<(String, String)> {
        match check(text) {
            Ok(_) => Vec::new(),
            Err(d) => d
                .into_iter()
                .map(|d| (d.key, d.keyword.unwrap_or_default()))
                .collect(),
        }
    }

    #[test]
    fn label_maps_are_checked_as_the_api_server_checks_them() {
        assert_eq!(
            codes(
                "podLabels:\n  team: a\n  example.com/x: ''\nnodeSelector:\n  kubernetes.io/os: linux\npodAnnotations:\n  Example.COM/x: 'any text'\n"
            ),
            Vec::<(String, String)>::new()
        );
        assert_eq!(
            codes("podLabels:\n  control-plane: x\n  bad key: v\n  ok: -v\n"),
            vec![
                ("podLabels.control-plane".into(), "selector-label".into()),
                ("podLabels.bad key".into(), "label-key".into()),
                ("podLabels.ok".into(), "label-value".into()),
            ]
        );
        assert_eq!(
            codes("serviceAccount:\n  annotations:\n    a/b/c: x\n"),
            vec![(
                "serviceAccount.annotations.a/b/c".into(),
                "annotation-key".into()
            )]
        );
        let big = "x".repeat(crate::names::ANNOTATIONS_MAX_BYTES);
        assert_eq!(
            codes(&format!("deploymentAnnotations:\n  a: {big}\n")),
            vec![("deploymentAnnotations".into(), "annotations-size".into())]
        );
    }
}
