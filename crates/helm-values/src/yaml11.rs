//! How Helm types a plain (unquoted, untagged) YAML scalar. Helm reads
//! values files with YAML 1.1 rules (its YAML library is go-yaml v2, behind
//! `sigs.k8s.io/yaml`), where editors and most other tools read YAML 1.2:
//!
//! - `y`, `Y`, `yes`, `Yes`, `YES`, `on`, `On`, `ON` are true and
//!   `n`, `N`, `no`, `No`, `NO`, `off`, `Off`, `OFF` false (1.2: strings);
//! - integers may carry `_` (`1_000`), `0b`/`0o` prefixes, and a leading
//!   `0` means octal (`0777` is 511; 1.2: 777);
//! - a number too large for a 64-bit float (`1e400`) is a string.
//!
//! asogen's YAML reader types values this way, so they mean what they mean to
//! Helm, and notes where YAML 1.2 reads the same text otherwise. The facts
//! were measured against Helm's own loader (tests/without_cluster/yaml11.rs).

use serde_json::{Number, Value};

/// What a plain scalar is under YAML 1.1, as Helm reads it; `None` when it
/// is none of the cases below (the caller types it as YAML 1.2 does, which
/// agrees there: nulls, `true`/`false`, strings).
pub enum Resolved {
    /// An integer within 64 bits.
    Integer(i64),
    /// An integer beyond 64 bits (Helm reads it as a float, with loss).
    TooLarge,
    /// A finite float.
    Float(f64),
    /// Text (e.g. `1e400`, which YAML 1.2 would read as a number).
    Text,
}

/// YAML 1.1's booleans beyond YAML 1.2's `true`/`false`.
pub fn boolean(text: &str) -> Option<bool> {
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// A number as Helm's loader reads it: a plain scalar starting with a
/// digit or a sign (integer first, then float), or with `.` (a float).
pub fn number(text: &str) -> Option<Resolved> {
    let first = text.chars().next()?;
    if first == '.' {
        return go_float(text).map(Resolved::Float);
    }
    if !(first.is_ascii_digit() || first == '+' || first == '-') {
        return None;
    }
    let plain: String = text.chars().filter(|&c| c != '_').collect();
    // Beyond 64 bits Helm reads a float and loses digits; asogen refuses
    // it, as no values key holds such a number.
    match go_semantics::strconv::parse_int(&plain) {
        Ok(n) => return Some(Resolved::Integer(n)),
        Err(go_semantics::strconv::ParseIntError::Range) => return Some(Resolved::TooLarge),
        Err(go_semantics::strconv::ParseIntError::Syntax) => {}
    }
    if is_yaml_float(&plain) {
        return Some(match go_float(&plain) {
            Some(f) => Resolved::Float(f),
            None => Resolved::Text,
        });
    }
    None
}

/// go-yaml v2's float form: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`.
fn is_yaml_float(text: &str) -> bool {
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => digits(fraction),
        Some((whole, fraction)) => digits(whole) && fraction.bytes().all(|b| b.is_ascii_digit()),
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    mantissa_ok && exponent_ok
}

/// A finite float in Go's decimal syntax, else `None` (Go's ParseFloat
/// fails on overflow, and YAML's `.inf` and `.nan` are refused elsewhere).
fn go_float(text: &str) -> Option<f64> {
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    if body.is_empty()
        || !body
            .bytes()
            .all(|b| b.is_ascii_digit() || b".eE+-".contains(&b))
    {
        return None;
    }
    text.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// An integer beyond 64 bits (see [`Resolved::TooLarge`]) as go-yaml v2
/// reads it outside values files: an unsigned 64-bit integer when it fits,
/// else a float; `None` when it is neither (a hexadecimal beyond 64 bits).
pub fn too_large(text: &str) -> Option<Value> {
    let plain: String = text.chars().filter(|&c| c != '_').collect();
    let plain = plain.strip_prefix('+').unwrap_or(&plain);
    if let Ok(n) = plain.parse::<u64>() {
        return Some(Value::from(n));
    }
    plain
        .parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map(Value::Number)
}

/// The JSON value of a resolved number, when it has one.
pub fn to_json(resolved: &Resolved) -> Option<Value> {
    match resolved {
        Resolved::Integer(n) => Some(Value::from(*n)),
        Resolved::Float(f) => Number::from_f64(*f).map(Value::Number),
        Resolved::TooLarge | Resolved::Text => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Option<Value> {
        number(text).and_then(|r| match r {
            Resolved::Text => Some(Value::String(text.into())),
            other => to_json(&other),
        })
    }

    #[test]
    fn numbers_as_helm_reads_them() {
        assert_eq!(json("0777"), Some(Value::from(511)));
        assert_eq!(json("0o17"), Some(Value::from(15)));
        assert_eq!(json("0x1F"), Some(Value::from(31)));
        assert_eq!(json("0b101"), Some(Value::from(5)));
        assert_eq!(json("1_000"), Some(Value::from(1000)));
        assert_eq!(json("09"), Some(serde_json::json!(9.0)));
        assert_eq!(json("1e3"), Some(serde_json::json!(1000.0)));
        assert_eq!(json(".5"), Some(serde_json::json!(0.5)));
        assert_eq!(json("1e400"), Some(Value::from("1e400")));
        assert_eq!(json("190:20:30"), None);
        assert_eq!(json("2001-12-14"), None);
        assert!(matches!(
            number("18446744073709551615"),
            Some(Resolved::TooLarge)
        ));
    }
}
