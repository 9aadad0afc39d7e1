//! Kubernetes names as the API server validates them (RFC 1123): a
//! namespace is a label, a ServiceAccount or PriorityClass a subdomain; and
//! the keys and values of labels and annotations (k8s.io/apimachinery's
//! `IsLabelKey`, `IsLabelValue`, `ValidateAnnotations`). The checks of `-n`,
//! asogen's values checks, and the schema patterns and chart guard of
//! name-, label- and annotation-valued keys come from here, so the command
//! line, asogen, Helm and the editor refuse the same names.

/// The chart's name, upstream's: its archive's prefix and the name its
/// helpers give the objects by default.
pub const CHART_NAME: &str = "azure-service-operator";

/// Longest RFC 1123 label (a namespace).
pub const LABEL_MAX: usize = 63;

/// Longest RFC 1123 subdomain (most object names).
pub const SUBDOMAIN_MAX: usize = 253;

/// A subdomain, or empty (the keys where empty means "the default").
pub const SUBDOMAIN_OR_EMPTY_PATTERN: &str =
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$";

/// Namespaces every cluster has: `--create-namespace` must not emit them
/// (applying would relabel them, e.g. kube-system as restricted).
pub const SYSTEM_NAMESPACES: [&str; 4] =
    ["default", "kube-system", "kube-public", "kube-node-lease"];

/// Longest name part of a label or annotation key (after its optional
/// `prefix/`), in bytes.
pub const KEY_NAME_MAX: usize = 63;

/// Longest label value, in bytes.
pub const LABEL_VALUE_MAX: usize = 63;

/// Most bytes the keys and values of one object's annotations may hold
/// together (the API server's `TotalAnnotationSizeLimitB`).
pub const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

/// The API server's words for a key's name part that is not a label key.
const KEY_NAME_RULE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')";

fn is_label(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

/// Whether `tag` is a valid OCI image tag: 1 to 128 of A-Z a-z 0-9 _ . -,
/// not starting with . or -.
pub fn valid_image_tag(tag: &str) -> bool {
    (1..=128).contains(&tag.len())
        && !tag.starts_with(['.', '-'])
        && tag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// Why `name` is not a valid namespace (an RFC 1123 label), in the API
/// server's terms; `None` when it is one.
pub fn label_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a namespace name may not be empty".into());
    }
    if name.chars().count() > LABEL_MAX {
        return Some(format!(
            "must be no more than {LABEL_MAX} characters (it has {})",
            name.chars().count()
        ));
    }
    (!is_label(name)).then(|| {
        "a lowercase RFC 1123 label must consist of lowercase letters, digits or '-', \
         and must start and end with a letter or digit"
            .to_string()
    })
}

/// Why `name` is not a valid object name (an RFC 1123 subdomain), in the
/// API server's terms; `None` when it is one.
pub fn subdomain_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a name may not be empty".into());
    }
    if name.chars().count() > SUBDOMAIN_MAX {
        return Some(format!(
            "must be no more than {SUBDOMAIN_MAX} characters (it has {})",
            name.chars().count()
        ));
    }
    (!name.split('.').all(is_label)).then(|| {
        "a lowercase RFC 1123 subdomain must consist of lowercase letters, digits, '-' or '.', \
         and each part between dots must start and end with a letter or digit"
            .to_string()
    })
}

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, of any length: the name
/// part of a label key, and a non-empty label value.
fn is_key_name(text: &str) -> bool {
    let bytes = text.as_bytes();
    let alphanumeric = |b: &u8| b.is_ascii_alphanumeric();
    bytes.first().is_some_and(alphanumeric)
        && bytes.last().is_some_and(alphanumeric)
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Why `key` is not a label key (a "qualified name": an optional DNS
/// subdomain prefix and `/`, then a name part of at most 63 bytes), in the
/// API server's words (`IsLabelKey`); empty when it is one.
pub fn label_key_problems(key: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let name = match key.split('/').collect::<Vec<_>>().as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                problems.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > SUBDOMAIN_MAX {
                    problems.push(format!(
                        "prefix part must be no more than {SUBDOMAIN_MAX} bytes"
                    ));
                }
                if !prefix.split('.').all(is_label) {
                    problems.push(
                        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')"
                            .to_string(),
                    );
                }
            }
            *name
        }
        _ => {
            return vec![format!(
                "a valid label key {KEY_NAME_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        problems.push("name part must be non-empty".to_string());
    } else if name.len() > KEY_NAME_MAX {
        problems.push(format!(
            "name part must be no more than {KEY_NAME_MAX} bytes"
        ));
    }
    if !is_key_name(name) {
        problems.push(format!("name part {KEY_NAME_RULE}"));
    }
    problems
}

/// `strings.ToLower` as Go has it, as far as the result can be a valid
/// key: ASCII letters, and the two other characters whose lower case is
/// ASCII (KELVIN SIGN to `k`, capital I with dot above to `i`, where Rust's
/// `to_lowercase` gives two characters). Anything else stays non-ASCII,
/// which no key allows either way.
fn go_lowercase(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{212A}' => 'k',
            '\u{0130}' => 'i',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// Why `key` is not an annotation key: a label key once lower-cased (the
/// API server's `ValidateAnnotations`); empty when it is one.
pub fn annotation_key_problems(key: &str) -> Vec<String> {
    label_key_problems(&go_lowercase(key))
}

/// Why `value` is not a label value (empty, or a name part of at most 63
/// bytes), in the API server's words (`IsLabelValue`); empty when it is one.
pub fn label_value_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > LABEL_VALUE_MAX {
        problems.push(format!("must be no more than {LABEL_VALUE_MAX} bytes"));
    }
    if !value.is_empty() && !is_key_name(value) {
        problems.push(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', 'my_value' or '12345')"
                .to_string(),
        );
    }
    problems
}

/// The bytes one object's annotations hold, as the API server counts them.
pub fn annotations_bytes<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> usize {
    entries.into_iter().map(|(k, v)| k.len() + v.len()).sum()
}

/// Regular expressions for schemas and the chart guard: each reads the same
/// in Go (Helm, the guard's `regexMatch`), ECMAScript (editors) and Rust,
/// so no lookaround; lengths are bounded repetitions. A key is valid when
/// it matches both [`key_patterns`]: the syntax with the name part's
/// length, and the prefix's length (a regular expression cannot bound a
/// subdomain's length and its syntax at once).
///
/// `lower_cased`: for annotation keys, which the API server checks lower
/// cased, the classes also hold what lower-cases into them.
pub fn key_patterns(lower_cased: bool) -> [String; 2] {
    let extra = if lower_cased {
        "A-Z\u{212A}\u{0130}"
    } else {
        ""
    };
    let name_extra = if lower_cased { "\u{212A}\u{0130}" } else { "" };
    let label = format!("[a-z0-9{extra}]([-a-z0-9{extra}]*[a-z0-9{extra}])?");
    let name_middle = KEY_NAME_MAX - 2;
    [
        format!(
            "^({label}(\\.{label})*/)?[A-Za-z0-9{name_extra}]([-A-Za-z0-9_.{name_extra}]{{0,{name_middle}}}[A-Za-z0-9{name_extra}])?$"
        ),
        // Fails only a prefix that is too long: any other bad key is the
        // first pattern's to refuse (one reason per key).
        format!("^([^/]*|[^/]{{0,{SUBDOMAIN_MAX}}}/[^/]*|[^/]*(/[^/]*){{2,}})$"),
    ]
}

/// A label value, empty or a name part of at most 63 bytes (see
/// [`key_patterns`]).
pub fn label_value_pattern() -> String {
    format!(
        "^([A-Za-z0-9]([-A-Za-z0-9_.]{{0,{}}}[A-Za-z0-9])?)?$",
        LABEL_VALUE_MAX - 2
    )
}

/// The codes of metadata the API server refuses: each message of the
/// check, the schema and the chart guard for a labels or annotations map
/// starts with one, as a rule's starts with its id.
pub mod metadata_codes {
    /// The code of a label key the API server refuses.
    pub const LABEL_KEY: &str = "label-key";
    /// The code of a label value the API server refuses.
    pub const LABEL_VALUE: &str = "label-value";
    /// The code of an annotation key the API server refuses.
    pub const ANNOTATION_KEY: &str = "annotation-key";
    /// The code of annotations larger than the API server takes.
    pub const ANNOTATIONS_SIZE: &str = "annotations-size";
    /// The code of a pod label that would change the Deployment's selector.
    pub const SELECTOR_LABEL: &str = "selector-label";

    /// Every code of this check: each message of the schema and the chart
    /// guard for these maps starts with one, as a rule's starts with its id.
    pub const CODES: [&str; 5] = [
        LABEL_KEY,
        LABEL_VALUE,
        ANNOTATION_KEY,
        ANNOTATIONS_SIZE,
        SELECTOR_LABEL,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags() {
        assert!(valid_image_tag("v2.22.0"));
        assert!(valid_image_tag("2.22.0_build-1"));
        assert!(!valid_image_tag("-x"));
        assert!(!valid_image_tag("a/b"));
        assert!(!valid_image_tag(""));
    }

    #[test]
    fn labels_and_subdomains_as_the_api_server_has_them() {
        for good in ["a", "azureserviceoperator-system", "0-9", &"a".repeat(63)] {
            assert_eq!(label_problem(good), None, "{good}");
        }
        for bad in [
            "",
            "Bad_NS",
            "../x",
            "-a",
            "a-",
            "a.b",
            &"a".repeat(64),
            "ns\n",
        ] {
            assert!(label_problem(bad).is_some(), "{bad:?}");
        }
        for good in ["a.b", "system-node-critical", "x-1.y-2"] {
            assert_eq!(subdomain_problem(good), None, "{good}");
        }
        for bad in ["", "a..b", ".a", "a.", "A", "a_b", &"a".repeat(254)] {
            assert!(subdomain_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn label_keys_and_values_as_the_api_server_has_them() {
        let name63 = "a".repeat(63);
        let prefix253 = format!("{}.{}", "b".repeat(126), "c".repeat(126));
        for good in [
            "a",
            "A",
            "a.b_c-d",
            "example.com/MyName",
            "kubernetes.io/os",
            name63.as_str(),
            &format!("{prefix253}/{name63}"),
        ] {
            assert_eq!(label_key_problems(good), Vec::<String>::new(), "{good}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "a b",
            "a/b/c",
            "/a",
            "a/",
            "Example.com/a",
            "ex_ample.com/a",
            "é",
            "\u{212A}",
            &"a".repeat(64),
            &format!("{prefix253}x/a"),
        ] {
            assert!(!label_key_problems(bad).is_empty(), "{bad}");
        }
        // Annotation keys are checked lower cased, as Go lower-cases them.
        for good in ["Example.COM/a", "\u{212A}", "\u{0130}.io/x"] {
            assert_eq!(
                annotation_key_problems(good),
                Vec::<String>::new(),
                "{good}"
            );
        }
        assert!(!annotation_key_problems("a b").is_empty());
        for good in ["", "a", "A-b_c.d", name63.as_str()] {
            assert_eq!(label_value_problems(good), Vec::<String>::new(), "{good}");
        }
        for bad in ["-a", "a-", "a b", "a/b", "é", &"a".repeat(64)] {
            assert!(!label_value_problems(bad).is_empty(), "{bad}");
        }
    }

    /// Every key and value of a generated corpus: the schema patterns (as
    /// the jsonschema crate reads them) and the functions agree.
    #[test]
    fn the_patterns_say_what_the_functions_say() {
        let matches = |patterns: &[String], text: &str| {
            patterns.iter().all(|pattern| {
                jsonschema::draft7::new(&serde_json::json!({"pattern": pattern}))
                    .unwrap()
                    .is_valid(&serde_json::json!(text))
            })
        };
        let corpus = generated_keys();
        assert!(corpus.len() > 200, "{}", corpus.len());
        for key in &corpus {
            assert_eq!(
                matches(&key_patterns(false), key),
                label_key_problems(key).is_empty(),
                "label key {key:?}"
            );
            assert_eq!(
                matches(&key_patterns(true), key),
                annotation_key_problems(key).is_empty(),
                "annotation key {key:?}"
            );
            assert_eq!(
                matches(&[label_value_pattern()], key),
                label_value_problems(key).is_empty(),
                "label value {key:?}"
            );
        }
    }

    /// Keys at and around every boundary, with every kind of character.
    fn generated_keys() -> Vec<String> {
        let parts = [
            String::new(),
            "a".into(),
            "A".into(),
            "0".into(),
            "-".into(),
            "_".into(),
            ".".into(),
            "a-b".into(),
            "a_b".into(),
            "a.b".into(),
            "-a".into(),
            "a-".into(),
            "a ".into(),
            "é".into(),
            "\u{212A}".into(),
            "\u{0130}".into(),
            "a\n".into(),
            "a".repeat(62),
            "a".repeat(63),
            "a".repeat(64),
            format!("a{}a", "-".repeat(61)),
        ];
        let prefixes = [
            String::new(),
            "a".into(),
            "A".into(),
            "a.b".into(),
            "a..b".into(),
            "a_b".into(),
            "-a".into(),
            "\u{212A}.io".into(),
            format!("{}.{}", "b".repeat(126), "c".repeat(126)),
            format!("{}.{}", "b".repeat(126), "c".repeat(127)),
        ];
        let mut out: Vec<String> = parts.to_vec();
        for prefix in &prefixes {
            for name in &parts {
                out.push(format!("{prefix}/{name}"));
            }
        }
        out.push("a/b/c".into());
        out
    }
}
