//! Path globs for the rules table.
//!
//! A pattern is matched against the whole path. `*` matches any run of characters inside one
//! segment and `?` one character; neither crosses a `/`. A segment that is exactly `**` matches
//! any number of segments, none included, so `**/package.json` matches `package.json` too.
//! Everything else is literal. Paths and patterns lose a leading `./` and doubled slashes first.

use std::borrow::Cow;

/// Drops leading `./`, doubled slashes and a trailing slash, so `./a//b/` reads as `a/b`.
pub fn normalize(path: &str) -> Cow<'_, str> {
    let dirty = path.starts_with("./")
        || path.contains("//")
        || path.contains("/./")
        || path.ends_with("/.")
        || (path.ends_with('/') && path.len() > 1);
    if !dirty {
        return Cow::Borrowed(path);
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    let lead = if path.starts_with('/') { "/" } else { "" };
    Cow::Owned(format!("{lead}{}", parts.join("/")))
}

/// A path split once into segments, so many globs can test it without splitting again.
pub struct Candidate<'a> {
    pub text: &'a str,
    segs: Vec<&'a str>,
}

impl<'a> Candidate<'a> {
    pub fn new(text: &'a str) -> Candidate<'a> {
        Candidate {
            text,
            segs: text.split('/').collect(),
        }
    }

    fn name(&self) -> &'a str {
        self.segs.last().copied().unwrap_or("")
    }
}

#[derive(Clone, Debug)]
enum Seg {
    /// `**`: any number of segments.
    Deep,
    Lit(String),
    Wild(String),
}

/// The common shapes get a direct test; the rest walk the segments.
#[derive(Clone, Debug)]
enum Shape {
    /// No wildcard at all.
    Exact(String),
    /// `**/NAME` with a literal name: the last segment equals it.
    AnyDepthName(String),
    /// `**/WILD` with one wildcard segment: only the last segment is tested.
    AnyDepthWild(String),
    /// `DIR/**` with a literal prefix.
    Under(String),
    Segments(Vec<Seg>),
}

/// One compiled pattern.
#[derive(Clone, Debug)]
pub struct Glob {
    pub source: String,
    shape: Shape,
}

fn is_wild(s: &str) -> bool {
    s.contains(['*', '?'])
}

impl Glob {
    /// Compiles a pattern; an empty one is refused.
    pub fn new(pattern: &str) -> Result<Glob, String> {
        let norm = normalize(pattern.trim());
        if norm.is_empty() {
            return Err(format!("empty glob {pattern:?}"));
        }
        let mut segs: Vec<Seg> = Vec::new();
        for part in norm.split('/') {
            let seg = if part == "**" {
                // `**/**` is `**`.
                if matches!(segs.last(), Some(Seg::Deep)) {
                    continue;
                }
                Seg::Deep
            } else if is_wild(part) {
                Seg::Wild(part.to_string())
            } else {
                Seg::Lit(part.to_string())
            };
            segs.push(seg);
        }
        let shape = match segs.as_slice() {
            [Seg::Deep, Seg::Lit(name)] => Shape::AnyDepthName(name.clone()),
            [Seg::Deep, Seg::Wild(name)] => Shape::AnyDepthWild(name.clone()),
            _ if !is_wild(&norm) => Shape::Exact(norm.to_string()),
            [head @ .., Seg::Deep]
                if !head.is_empty() && head.iter().all(|s| matches!(s, Seg::Lit(_))) =>
            {
                Shape::Under(format!("{}/", &norm[..norm.len() - 3]))
            }
            _ => Shape::Segments(segs),
        };
        Ok(Glob {
            source: pattern.to_string(),
            shape,
        })
    }

    /// Whether the pattern matches the whole (normalised) path.
    pub fn matches(&self, path: &Candidate) -> bool {
        match &self.shape {
            Shape::Exact(s) => path.text == s,
            Shape::AnyDepthName(name) => path.name() == name,
            Shape::AnyDepthWild(pat) => wild(pat.as_bytes(), path.name().as_bytes()),
            Shape::Under(prefix) => path.text.len() > prefix.len() && path.text.starts_with(prefix),
            Shape::Segments(segs) => walk(segs, &path.segs),
        }
    }

    /// [`Glob::matches`] for a path given as text (tests, one-off checks).
    pub fn matches_str(&self, path: &str) -> bool {
        let norm = normalize(path);
        self.matches(&Candidate::new(&norm))
    }
}

/// Segment-by-segment matching; `**` tries every split.
fn walk(pat: &[Seg], path: &[&str]) -> bool {
    match pat.split_first() {
        None => path.is_empty(),
        // A trailing `**` needs something under it: `dir/**` is what is inside `dir`.
        Some((Seg::Deep, [])) => !path.is_empty(),
        Some((Seg::Deep, rest)) => (0..=path.len()).any(|i| walk(rest, &path[i..])),
        Some((seg, rest)) => match path.split_first() {
            None => false,
            Some((first, tail)) => {
                let hit = match seg {
                    Seg::Lit(s) => first == s,
                    Seg::Wild(p) => wild(p.as_bytes(), first.as_bytes()),
                    Seg::Deep => unreachable!(),
                };
                hit && walk(rest, tail)
            }
        },
    }
}

/// Length of the UTF-8 character whose first byte is `b`.
fn char_len(b: u8) -> usize {
    match b {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

/// `*` and `?` within one segment (the segment holds no `/`). Greedy with one backtrack point,
/// which is enough for `*` because a later star can absorb what an earlier one would have.
fn wild(pat: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pat.len() && pat[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pat.len() && pat[p] == b'?' {
            p += 1;
            t += char_len(text[t]);
        } else if p < pat.len() && pat[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            // Let the star take one more character and retry.
            let next = st + char_len(text[st]);
            star = Some((sp, next));
            p = sp + 1;
            t = next;
        } else {
            return false;
        }
    }
    pat[p..].iter().all(|&c| c == b'*') && t == text.len()
}

/// Several globs, tested in order.
#[derive(Clone, Debug, Default)]
pub struct GlobSet {
    globs: Vec<Glob>,
}

impl GlobSet {
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<GlobSet, String> {
        let globs = patterns
            .iter()
            .map(|p| Glob::new(p.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(GlobSet { globs })
    }

    pub fn matches(&self, path: &Candidate) -> bool {
        self.globs.iter().any(|g| g.matches(path))
    }

    pub fn is_empty(&self) -> bool {
        self.globs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        Glob::new(pattern).unwrap().matches_str(path)
    }

    #[test]
    fn star_stays_inside_one_segment() {
        assert!(m("packages/*/api/*.d.ts", "packages/core/api/core.d.ts"));
        assert!(!m("packages/*/api/*.d.ts", "packages/a/b/api/core.d.ts"));
        assert!(!m(
            "packages/*/api/*.d.ts",
            "packages/core/api/sub/core.d.ts"
        ));
        assert!(!m("*.md", "docs/a.md"));
        assert!(m("*.md", "a.md"));
        assert!(m(".changeset/*.md", ".changeset/brave-cats.md"));
    }

    #[test]
    fn double_star_spans_segments_and_none() {
        assert!(m("**/package.json", "package.json"));
        assert!(m("**/package.json", "packages/a/package.json"));
        assert!(!m("**/package.json", "packages/a/package.json.bak"));
        assert!(m("**/tests/**", "tests/a.rs"));
        assert!(m("**/tests/**", "crates/x/tests/deep/a.rs"));
        assert!(!m("**/tests/**", "crates/x/tests"));
        assert!(m("src/**/mod.rs", "src/mod.rs"));
        assert!(m("src/**/mod.rs", "src/a/b/mod.rs"));
        assert!(m(".github/workflows/**", ".github/workflows/ci.yml"));
        assert!(!m(".github/workflows/**", ".github/workflows"));
        assert!(m("**/requirements*.txt", "svc/requirements-dev.txt"));
        assert!(m("a/**/b/**/c", "a/x/b/y/z/c"));
        assert!(!m("a/**/b/**/c", "a/x/y/z/c"));
    }

    #[test]
    fn question_mark_is_one_character_even_outside_ascii() {
        assert!(m("a?c", "abc"));
        assert!(m("a?c", "aéc"));
        assert!(!m("a?c", "ac"));
        assert!(!m("a?c", "a/c"));
    }

    #[test]
    fn stars_backtrack() {
        assert!(m("*.min.js", "app.min.js"));
        assert!(m("*a*b", "xaab"));
        assert!(m("*a*b", "ab"));
        assert!(!m("*a*b", "ba"));
        assert!(m("**/*_pb2.py", "gen/x_pb2.py"));
        assert!(m("*", ".env"));
    }

    #[test]
    fn dot_slash_prefixes_and_doubled_slashes_are_normalised() {
        assert!(m("./pnpm-lock.yaml", "pnpm-lock.yaml"));
        assert!(m("pnpm-lock.yaml", "./pnpm-lock.yaml"));
        assert!(m("a/b", "a//b"));
        assert_eq!(normalize("./././a//b/"), "a/b");
        assert_eq!(normalize("a/./b"), "a/b");
        assert_eq!(normalize("plain/path"), "plain/path");
    }

    #[test]
    fn empty_patterns_are_refused() {
        assert!(Glob::new("").is_err());
        assert!(Glob::new("./").is_err());
    }
}
