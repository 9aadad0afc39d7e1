//! What never reaches a person's screen: secret values. Which keys hold a
//! secret, and which lines of a values file lie inside a secret's value,
//! found in one pass over the text (it also works for a file that does not
//! parse, where there is no document to ask).
//!
//! The rule: a key whose name looks secret (it holds `secret`, `password`,
//! `passwd`, `certificate` or `token`, one of them one typo away, or ends
//! in the start of one: `azureClientCert`) and every `extraEnv` entry's
//! `value` (ASO reads credentials from its environment) hold a secret. On
//! a shown line, everything after such a key's `:` is `<redacted>`; every
//! later line that belongs to the value (more indented, inside an open
//! quote, or a continuation that starts no new key) is `<redacted>` after
//! its indentation.
//!
//! Command-line values have no lines to hide: a message quotes a `--set`
//! family expression only when [`may_hold_secret`] says it cannot hold one,
//! and never quotes a value that a `--set-file` read (a file's content is
//! treated as a secret, whatever its key: certificates come that way).

/// Shown instead of a secret value.
pub const REDACTED: &str = "<redacted>";

/// Words that mark a key as holding a secret (its value is never printed).
const SECRET_WORDS: [&str; 5] = ["secret", "password", "passwd", "certificate", "token"];

/// Key names that contain one of those words but hold no secret.
const NOT_SECRET: [&str; 3] = ["pullsecrets", "createazureoperatorsecret", "secretkeyref"];

/// The shortest start of a secret word that marks a name ending in it
/// (`azureClientCert`, `dbPass`).
const SHORTEST_STEM: usize = 4;

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// Whether a key name (or any segment of a key path or JSON pointer) looks
/// like it holds a secret: `azureClientSecret`, `azureClientCertificatePassword`,
/// a misspelt `azureClientSecert` or a cut `azureClientCert`, or the value
/// of an `extraEnv` entry.
pub fn is_secret_name(name: &str) -> bool {
    let lower = name.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !is_name_char(c)).collect();
    if words.contains(&"extraenv") && words.last() == Some(&"value") {
        return true;
    }
    words.iter().any(|word| {
        !NOT_SECRET.contains(word)
            && SECRET_WORDS
                .iter()
                .any(|w| holds_word(word, w) || ends_in_stem(word, w))
    })
}

/// Whether a command-line expression (`--set` family text, well formed or
/// not) may hold a secret, so that no part of it after its first key may be
/// quoted: any secret-looking word in it (keys of a JSON object included,
/// before or after a syntax error), any mention of `extraEnv` (whose
/// entries' values are secrets), or a JSON `\u` escape, which may spell
/// either. Escapes of Helm's syntax (`azureClient\Secret`) do not hide a
/// word. When in doubt this says yes: a false alarm only shortens a message.
pub fn may_hold_secret(text: &str) -> bool {
    let unescaped: String = text.chars().filter(|c| *c != '\\').collect();
    text.contains("\\u")
        || unescaped.to_lowercase().contains("extraenv")
        || is_secret_name(&unescaped)
}

/// `text` with every double-quoted string in it (Rust's and serde's
/// `{:?}` quoting, `\"` escaped) shown as `"<redacted>"`: for a library's
/// message that may quote a value it was given.
pub fn without_quoted_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c != '"' {
            continue;
        }
        out.push_str(REDACTED);
        while let Some(inner) = chars.next() {
            match inner {
                '\\' => {
                    chars.next();
                }
                '"' => break,
                _ => {}
            }
        }
        out.push('"');
    }
    out
}

/// `name` contains `word`, or (for words of six letters or more) a
/// misspelling of it one edit away.
fn holds_word(name: &str, word: &str) -> bool {
    if name.contains(word) {
        return true;
    }
    if word.len() < 6 {
        return false;
    }
    let word = word.as_bytes();
    let chars: Vec<char> = name.chars().collect();
    (word.len() - 1..=word.len() + 1).any(|len| {
        chars.windows(len).any(|window| {
            // One edit away keeps one of the word's first two letters in
            // one of the window's first two places: a cheap test first,
            // since every key of a large file passes through here.
            let near = |c: char| c == char::from(word[0]) || c == char::from(word[1]);
            (near(window[0]) || near(window[1]))
                && strsim::osa_distance(
                    &window.iter().collect::<String>(),
                    std::str::from_utf8(word).unwrap_or_default(),
                ) <= 1
        })
    })
}

/// `name` ends in the first four or more letters of `word`.
fn ends_in_stem(name: &str, word: &str) -> bool {
    (SHORTEST_STEM..word.len()).any(|len| name.ends_with(&word[..len]))
}

/// Leading spaces and tabs, in characters.
fn indentation(line: &str) -> usize {
    line.chars().take_while(|c| *c == ' ' || *c == '\t').count()
}

/// The keys written on a line (`name:` followed by a blank or the end of
/// the line), each with its column and the character offset just after its
/// colon (both 0-based, in characters).
fn keys(line: &str) -> Vec<(&str, usize, usize)> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        if !is_name_char(chars[i].1) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && (is_name_char(chars[i].1) || chars[i].1 == '.') {
            i += 1;
        }
        let followed_by_blank = chars
            .get(i + 1)
            .is_none_or(|(_, c)| *c == ' ' || *c == '\t');
        if chars.get(i).is_some_and(|(_, c)| *c == ':') && followed_by_blank {
            let end = chars.get(i).map_or(line.len(), |(at, _)| *at);
            out.push((&line[chars[start].0..end], start, i + 1));
        }
    }
    out
}

/// Whether a quote opened at the start of `value` is still open at its end.
fn opens_quote(value: &str) -> Option<char> {
    let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let rest = &value[1..];
    (!closes_quote(rest, quote)).then_some(quote)
}

/// Whether `text` holds the closing `quote` (`\"` and `''` do not close).
fn closes_quote(text: &str, quote: char) -> bool {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quote == '"' && c == '\\' {
            chars.next();
        } else if c == quote {
            if quote == '\'' && chars.peek() == Some(&'\'') {
                chars.next();
            } else {
                return true;
            }
        }
    }
    false
}

/// The nesting of flow collections after `text`, starting at `depth`
/// (brackets inside quotes do not count).
fn flow_depth(text: &str, mut depth: usize) -> usize {
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') if depth == 0 => break,
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    depth
}

/// A line that starts something new at its indentation: a key, a list
/// item, a comment or a document marker.
fn starts_node(body: &str) -> bool {
    body.starts_with('#')
        || body.starts_with("- ")
        || body == "-"
        || body.starts_with("---")
        || body.starts_with("...")
        || keys(body)
            .first()
            .is_some_and(|(_, column, _)| *column == 0)
}

/// For each line of a values text, how many of its characters may be
/// shown, or `None` when nothing on it is secret. One pass, so showing
/// many problems of one file costs the file once.
pub fn secret_lines(text: &str) -> Vec<Option<usize>> {
    struct Inside {
        indent: usize,
        quote: Option<char>,
        // Open `[` and `{` of a flow collection that spans lines.
        depth: usize,
    }
    let mut inside: Option<Inside> = None;
    // The indentation of an `extraEnv:` key whose entries follow.
    let mut extra_env: Option<usize> = None;
    let mut out = Vec::new();
    for line in text.lines() {
        let indent = indentation(line);
        let body = line.trim_start_matches([' ', '\t']);
        if let Some(secret) = &mut inside {
            if let Some(quote) = secret.quote {
                if closes_quote(line, quote) {
                    secret.quote = None;
                }
                out.push(Some(indent));
                continue;
            }
            if secret.depth > 0 {
                secret.depth = flow_depth(line, secret.depth);
                out.push(Some(indent));
                continue;
            }
            if body.is_empty() {
                out.push(None);
                continue;
            }
            if indent > secret.indent || !starts_node(body) {
                out.push(Some(indent));
                continue;
            }
            inside = None;
        }
        if let Some(env) = extra_env
            && !body.is_empty()
            && !body.starts_with('#')
            && (indent < env || (indent == env && !body.starts_with('-')))
        {
            extra_env = None;
        }
        let mut keep = None;
        for (key, column, after_colon) in keys(line) {
            if key == "extraEnv" {
                extra_env = Some(indent);
            }
            if is_secret_name(key) || (extra_env.is_some() && key == "value") {
                let value = line
                    .chars()
                    .skip(after_colon)
                    .collect::<String>()
                    .trim()
                    .to_string();
                inside = Some(Inside {
                    indent: column,
                    quote: opens_quote(&value),
                    depth: flow_depth(&value, 0),
                });
                keep = Some(after_colon);
                break;
            }
        }
        if keep.is_none() {
            // A secret-looking word that is not a key (`name: AZURE_CLIENT_SECRET`
            // in a flow list): hide from it on.
            let mut offset = 0;
            for word in line.split_inclusive(|c: char| !is_name_char(c)) {
                let name = word.trim_end_matches(|c: char| !is_name_char(c));
                let lower = name.to_lowercase();
                let secret = SECRET_WORDS.iter().any(|w| lower.contains(w))
                    && !NOT_SECRET.iter().any(|n| lower.contains(n));
                if secret && !ENV_NAMES.contains(&name) {
                    keep = Some(line[..offset].chars().count());
                    break;
                }
                offset += word.len();
            }
        }
        out.push(keep);
    }
    out
}

/// Environment variable names that say a secret follows but are not one:
/// shown, so `name: AZURE_CLIENT_SECRET` stays readable (its `value` is
/// hidden anyway).
const ENV_NAMES: [&str; 3] = [
    "AZURE_CLIENT_SECRET",
    "AZURE_CLIENT_CERTIFICATE",
    "AZURE_CLIENT_CERTIFICATE_PASSWORD",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_include_misspellings_cuts_and_env_values_but_not_references() {
        assert!(is_secret_name("azureClientSecret"));
        assert!(is_secret_name("/azureClientCertificatePassword"));
        assert!(is_secret_name("azureClientSecert"));
        assert!(is_secret_name("azureClientCert"));
        assert!(is_secret_name("/extraEnv/0/value"));
        assert!(is_secret_name("extraEnv[3].value"));
        assert!(!is_secret_name("extraEnv[3].name"));
        assert!(!is_secret_name("/image/pullSecrets/0/name"));
        assert!(!is_secret_name("extraEnv[0].valueFrom.secretKeyRef.name"));
        assert!(!is_secret_name("createAzureOperatorSecret"));
        assert!(!is_secret_name("webhook.certDir"));
        assert!(!is_secret_name("replicaCount"));
    }

    #[test]
    fn expressions_that_may_hold_a_secret() {
        for text in [
            "azureClientSecret=p4ss,w0rd",
            r#"{"azureClientSecret": "x", oops}"#,
            r#"{"a": {"b": {"dbPassword": "x"}}}"#,
            r#"{"extraEnv":[{"name":"X","value":"x"}"#,
            "extraEnv[0].value=a,b",
            r"azureClient\Secret=x",
            r#"{"azureClient\u0053ecret": "x"}"#,
            "EXTRAENV=1",
        ] {
            assert!(may_hold_secret(text), "{text}");
        }
        for text in [
            "replicaCount=1,oops",
            r#"{"podLabels": {"team": "a"}"#,
            "image.pullSecrets[0].name=acr",
        ] {
            assert!(!may_hold_secret(text), "{text}");
        }
    }

    #[test]
    fn quoted_text_is_redacted() {
        assert_eq!(
            without_quoted_text(r#"invalid type: string "p4\"ss", expected i32"#),
            r#"invalid type: string "<redacted>", expected i32"#
        );
        assert_eq!(without_quoted_text("no quotes"), "no quotes");
        assert_eq!(without_quoted_text(r#"open "abc"#), r#"open "<redacted>""#);
    }

    fn hidden(text: &str) -> Vec<Option<usize>> {
        secret_lines(text)
    }

    #[test]
    fn lines_inside_a_secret_value_are_hidden() {
        // A PEM block with a tab-indented line.
        let pem = "azureClientCertificate: |\n  -----BEGIN-----\n\tMIIB\n  -----END-----\nreplicaCount: 2\n";
        assert_eq!(hidden(pem), vec![Some(23), Some(2), Some(1), Some(2), None]);
        // A plain scalar continued at column 0, then a new key.
        let plain = "azureClientSecret: first\ns3cr3t\nreplicaCount: 2\n";
        assert_eq!(hidden(plain), vec![Some(18), Some(0), None]);
        // An open quote hides everything up to its end.
        let quoted = "azureClientSecret: \"a\nreplicaCount: 2\nb\"\nreplicaCount: 2\n";
        assert_eq!(hidden(quoted), vec![Some(18), Some(0), Some(0), None]);
        // A flow collection across lines, its second line at column 0.
        let flow = "azureClientSecret: {a: b,\ns3cr3t: 1, a: 2}\nreplicaCount: 2\n";
        assert_eq!(hidden(flow), vec![Some(18), Some(0), None]);
        // extraEnv values, block and flow.
        let env = "extraEnv:\n- name: AZURE_CLIENT_SECRET\n  value: 7331\n- {name: X, value: y}\npodLabels: {a: b}\n";
        assert_eq!(hidden(env), vec![None, None, Some(8), Some(18), None]);
        // Other lines are left alone.
        assert_eq!(hidden("podLabels:\n  a: b\n"), vec![None, None]);
    }
}
