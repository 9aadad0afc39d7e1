//! JSON pointers (RFC 6901): how every stage names a node of the values or
//! of a rendered object (spans of a parsed document, schema look-ups,
//! diagnostics, JSON patches). The one escape and the one unescape of a
//! pointer segment live here, with the dotted key path users read in
//! messages.

/// Escapes one pointer segment: `~` becomes `~0`, `/` becomes `~1`.
pub fn escape_segment(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Unescapes one pointer segment: the inverse of [`escape_segment`]
/// (`~1` becomes `/` first, then `~0` becomes `~`, as RFC 6901 orders it).
pub fn unescape_segment(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// Turns a JSON pointer into the dotted key path users write
/// (`/tolerations/0/key` becomes `tolerations[0].key`).
pub fn to_key_path(pointer: &str) -> String {
    let mut out = String::new();
    for raw in pointer.split('/').skip(1) {
        let segment = unescape_segment(raw);
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{segment}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            if segment.contains('.') || segment.is_empty() {
                out.push_str(&format!("\"{segment}\""));
            } else {
                out.push_str(&segment);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_paths_read_like_helm_keys() {
        assert_eq!(to_key_path("/tolerations/0/key"), "tolerations[0].key");
        assert_eq!(
            to_key_path("/nodeSelector/kubernetes.io~1os"),
            "nodeSelector.\"kubernetes.io/os\""
        );
    }

    #[test]
    fn segments_escape_and_unescape_as_rfc_6901_says() {
        for (raw, escaped) in [
            ("kubernetes.io/os", "kubernetes.io~1os"),
            ("a~b", "a~0b"),
            ("~1", "~01"),
            ("/~", "~1~0"),
        ] {
            assert_eq!(escape_segment(raw), escaped);
            assert_eq!(unescape_segment(escaped), raw);
        }
    }
}
