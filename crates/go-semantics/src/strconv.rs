//! Go's `strconv.ParseInt(text, 0, 64)`, as Helm (a Go program) reads an
//! integer: in a values file (after the YAML loader drops `_`) and in
//! sprig's `toInt64`/`int`. One reading for both.

/// Why a text is not an int64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseIntError {
    /// It is not an integer at all.
    Syntax,
    /// It is an integer beyond int64.
    Range,
}

/// Go's `strconv.ParseInt(text, 0, 64)`: a sign, then `0x`, `0o`, `0b` or
/// a leading `0` (octal) for the base, `_` between digits (or after the
/// base prefix), as Go's integer literals allow.
pub fn parse_int(text: &str) -> Result<i64, ParseIntError> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        Some(_) => (false, text),
        None => return Err(ParseIntError::Syntax),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(rest) = lower.strip_prefix("0x") {
        (16, rest)
    } else if let Some(rest) = lower.strip_prefix("0o") {
        (8, rest)
    } else if let Some(rest) = lower.strip_prefix("0b") {
        (2, rest)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    let prefixed = radix != 10;
    let underscores_fit =
        !digits.ends_with('_') && !digits.contains("__") && (prefixed || !digits.starts_with('_'));
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if !underscores_fit || digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(ParseIntError::Syntax);
    }
    let limit = if negative {
        u128::from(i64::MIN.unsigned_abs())
    } else {
        i64::MAX as u128
    };
    // every digit is valid, so only the size can fail
    let magnitude = u128::from_str_radix(&digits, radix)
        .ok()
        .filter(|m| *m <= limit)
        .ok_or(ParseIntError::Range)?;
    Ok(if negative {
        (magnitude as i128).wrapping_neg() as i64
    } else {
        magnitude as i64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_read_as_go_reads_them() {
        for (text, want) in [
            ("42", Ok(42)),
            ("-42", Ok(-42)),
            ("+7", Ok(7)),
            ("0x1F", Ok(31)),
            ("0o17", Ok(15)),
            ("017", Ok(15)),
            ("0b101", Ok(5)),
            ("1_000", Ok(1000)),
            ("0x_1F", Ok(31)),
            ("0", Ok(0)),
            ("9223372036854775807", Ok(i64::MAX)),
            ("-9223372036854775808", Ok(i64::MIN)),
            ("9223372036854775808", Err(ParseIntError::Range)),
            (
                "99999999999999999999999999999999999999999",
                Err(ParseIntError::Range),
            ),
            ("_1", Err(ParseIntError::Syntax)),
            ("1_", Err(ParseIntError::Syntax)),
            ("1__0", Err(ParseIntError::Syntax)),
            ("08", Err(ParseIntError::Syntax)),
            ("0x", Err(ParseIntError::Syntax)),
            ("+-1", Err(ParseIntError::Syntax)),
            ("", Err(ParseIntError::Syntax)),
            ("1.0", Err(ParseIntError::Syntax)),
        ] {
            assert_eq!(parse_int(text), want, "{text:?}");
        }
    }
}
