//! Paths as git writes them in its diff output: C-quoted when they hold special bytes, and cut
//! short when an error shows one. Shared by the `--numstat` and `--raw` readers.

/// At most 80 characters of a text, for an error that shows it.
pub(super) fn short(s: &str) -> String {
    s.chars().take(80).collect()
}

/// Reads one C-style quoted string as git writes it; returns it and the text after it.
pub(super) fn unquote(s: &str) -> Result<(String, &str), String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let text = String::from_utf8(out)
                    .map_err(|_| "a quoted path that is not UTF-8".to_string())?;
                return Ok((text, &s[i + 1..]));
            }
            b'\\' if i + 1 < b.len() => {
                let c = b[i + 1];
                let simple = match c {
                    b'a' => Some(7),
                    b'b' => Some(8),
                    b't' => Some(b'\t'),
                    b'n' => Some(b'\n'),
                    b'v' => Some(11),
                    b'f' => Some(12),
                    b'r' => Some(b'\r'),
                    b'"' | b'\\' => Some(c),
                    _ => None,
                };
                if let Some(byte) = simple {
                    out.push(byte);
                    i += 2;
                } else if i + 3 < b.len()
                    && b[i + 1..i + 4].iter().all(|d| (b'0'..=b'7').contains(d))
                {
                    let v = b[i + 1..i + 4]
                        .iter()
                        .fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
                    out.push(u8::try_from(v).map_err(|_| "an octal escape past \\377")?);
                    i += 4;
                } else {
                    return Err(format!(
                        "an unknown escape in a quoted path: {:?}",
                        short(s)
                    ));
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Err(format!(
        "a quoted path without its closing quote: {:?}",
        short(s)
    ))
}
