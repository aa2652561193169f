//! Path globs for the rules table.
//!
//! A pattern is matched against the whole path. `*` matches any run of characters inside one
//! segment and `?` one character; neither crosses a `/`. A segment that is exactly `**` matches
//! any number of segments, none included, so `**/package.json` matches `package.json` too.
//! Everything else is literal. Paths and patterns lose a leading `./` and doubled slashes first.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

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

/// A path ready to be tested by many globs: its text and its last segment.
pub struct Candidate<'a> {
    pub text: &'a str,
    name: &'a str,
}

impl<'a> Candidate<'a> {
    pub fn new(text: &'a str) -> Candidate<'a> {
        let name = text.rsplit('/').next().unwrap_or(text);
        Candidate { text, name }
    }

    /// The folders the path is in, outermost first.
    fn dirs(&self) -> impl Iterator<Item = &'a str> {
        let dir = &self.text[..self.text.len() - self.name.len()];
        dir.split('/').filter(|s| !s.is_empty())
    }
}

/// One segment with wildcards.
#[derive(Clone, Debug)]
enum Wild {
    /// Only `*`: the literal pieces between the stars, which must appear in order.
    Stars(Vec<String>),
    /// With `?` too: matched character by character.
    Any(String),
}

impl Wild {
    fn new(seg: &str) -> Wild {
        if seg.contains('?') {
            Wild::Any(seg.to_string())
        } else {
            Wild::Stars(seg.split('*').map(str::to_string).collect())
        }
    }

    fn matches(&self, text: &str) -> bool {
        match self {
            Wild::Any(p) => wild(p.as_bytes(), text.as_bytes()),
            Wild::Stars(pieces) => {
                // At least two pieces: the text before the first star and after the last.
                let (first, last) = (&pieces[0], &pieces[pieces.len() - 1]);
                if text.len() < first.len() + last.len()
                    || !text.starts_with(first.as_str())
                    || !text.ends_with(last.as_str())
                {
                    return false;
                }
                let mut rest = &text.as_bytes()[first.len()..text.len() - last.len()];
                for piece in &pieces[1..pieces.len() - 1] {
                    match find(rest, piece.as_bytes()) {
                        Some(i) => rest = &rest[i + piece.len()..],
                        None => return false,
                    }
                }
                true
            }
        }
    }
}

/// Where `needle` first occurs in `hay`. Names are short, so a plain scan beats building a
/// substring searcher for each test.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let Some(&first) = needle.first() else {
        return Some(0);
    };
    let last_start = hay.len().checked_sub(needle.len())?;
    (0..=last_start).find(|&i| hay[i] == first && &hay[i..i + needle.len()] == needle)
}

/// The extension a name must end in for a `*`-only pattern to match it: the text after the
/// last dot of its last piece, when that piece has a dot (`*.min.js` needs `js`).
fn required_ext(w: &Wild) -> Option<&str> {
    match w {
        Wild::Stars(pieces) => pieces.last()?.rsplit_once('.').map(|(_, ext)| ext),
        Wild::Any(_) => None,
    }
}

/// The extension of a name: the text after its last dot, or nothing.
fn ext(name: &str) -> &str {
    name.rsplit_once('.').map_or("", |(_, e)| e)
}

#[derive(Clone, Debug)]
enum Seg {
    /// `**`: any number of segments.
    Deep,
    Lit(String),
    Wild(Wild),
}

/// The common shapes get a direct test; the rest walk the segments.
#[derive(Clone, Debug)]
enum Shape {
    /// No wildcard at all.
    Exact(String),
    /// `**/NAME`: the last segment is NAME.
    AnyDepthName(String),
    /// `**/DIR/**`: some folder on the path is DIR.
    AnyDepthDir(String),
    /// `**/WILD`: the last segment matches WILD.
    AnyDepthWild(Wild),
    /// `DIR/**` with a literal DIR: the path is under it.
    Under(String),
    /// Anything else, after a literal prefix every match starts with (maybe empty).
    Segments(String, Vec<Seg>),
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
                Seg::Wild(Wild::new(part))
            } else {
                Seg::Lit(part.to_string())
            };
            segs.push(seg);
        }
        let shape = match segs.as_slice() {
            [Seg::Deep, Seg::Lit(name)] => Shape::AnyDepthName(name.clone()),
            [Seg::Deep, Seg::Lit(dir), Seg::Deep] => Shape::AnyDepthDir(dir.clone()),
            [Seg::Deep, Seg::Wild(w)] => Shape::AnyDepthWild(w.clone()),
            _ if !is_wild(&norm) => Shape::Exact(norm.to_string()),
            [head @ .., Seg::Deep]
                if !head.is_empty() && head.iter().all(|s| matches!(s, Seg::Lit(_))) =>
            {
                Shape::Under(format!("{}/", &norm[..norm.len() - 3]))
            }
            _ => {
                let lits: Vec<&str> = segs
                    .iter()
                    .map_while(|s| match s {
                        Seg::Lit(l) => Some(l.as_str()),
                        _ => None,
                    })
                    .collect();
                let prefix = if lits.is_empty() {
                    String::new()
                } else {
                    format!("{}/", lits.join("/"))
                };
                Shape::Segments(prefix, segs)
            }
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
            Shape::AnyDepthName(name) => path.name == name,
            Shape::AnyDepthDir(dir) => path.dirs().any(|d| d == dir),
            Shape::AnyDepthWild(w) => w.matches(path.name),
            Shape::Under(prefix) => path.text.len() > prefix.len() && path.text.starts_with(prefix),
            Shape::Segments(prefix, segs) => {
                // The last segment rejects most paths before any walking.
                let last_ok = match segs.last() {
                    Some(Seg::Lit(l)) => path.name == l,
                    Some(Seg::Wild(w)) => w.matches(path.name),
                    _ => true,
                };
                last_ok && path.text.starts_with(prefix.as_str()) && walk(segs, Some(path.text))
            }
        }
    }

    /// [`Glob::matches`] for a path given as text (tests, one-off checks).
    pub fn matches_str(&self, path: &str) -> bool {
        let norm = normalize(path);
        self.matches(&Candidate::new(&norm))
    }
}

/// The first segment of a path and the rest (`None` after the last segment).
fn split_first(path: &str) -> (&str, Option<&str>) {
    match path.split_once('/') {
        Some((first, rest)) => (first, Some(rest)),
        None => (path, None),
    }
}

/// Segment-by-segment matching on the text itself (no allocation); `path` is `None` once
/// every segment is used. `**` tries every split.
fn walk(pat: &[Seg], path: Option<&str>) -> bool {
    match pat.split_first() {
        None => path.is_none(),
        // A trailing `**` needs something under it: `dir/**` is what is inside `dir`.
        Some((Seg::Deep, [])) => path.is_some(),
        Some((Seg::Deep, rest)) => {
            let mut at = path;
            loop {
                if walk(rest, at) {
                    return true;
                }
                match at {
                    Some(p) => at = split_first(p).1,
                    None => return false,
                }
            }
        }
        Some((seg, rest)) => match path {
            None => false,
            Some(p) => {
                let (first, tail) = split_first(p);
                let hit = match seg {
                    Seg::Lit(s) => first == s,
                    Seg::Wild(w) => w.matches(first),
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

/// A small fast hash for the short pattern names the table looks up (the keys are the
/// rules' own names, so a path cannot make lookups degrade).
#[derive(Clone, Copy, Default)]
pub struct Fx(u64);

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap = HashMap<String, u64, BuildHasherDefault<Fx>>;

/// Up to 64 sets of globs tested together: [`GlobTable::mask`] answers, for one path, which
/// sets match it, as bits. Whole paths, last segments and `**/DIR/**` folders are looked up in
/// hash maps, so long lists of manifest names cost one lookup; the rest are tested in turn.
#[derive(Clone, Default)]
pub struct GlobTable {
    exact: FxMap,
    names: FxMap,
    dirs: FxMap,
    /// `**/WILD` patterns that need a given extension, by that extension.
    by_ext: HashMap<String, Vec<(Wild, u64)>, BuildHasherDefault<Fx>>,
    others: Vec<(Glob, u64)>,
}

/// The most sets one table holds.
pub const MAX_SETS: usize = 64;

impl GlobTable {
    /// Set `i` of `sets` answers as bit `i`.
    pub fn new<S: AsRef<str>>(sets: &[&[S]]) -> Result<GlobTable, String> {
        if sets.len() > MAX_SETS {
            return Err(format!("more than {MAX_SETS} sets of globs"));
        }
        let mut table = GlobTable::default();
        for (i, patterns) in sets.iter().enumerate() {
            let bit = 1u64 << i;
            for p in patterns.iter() {
                let glob = Glob::new(p.as_ref())?;
                match glob.shape {
                    Shape::Exact(s) => *table.exact.entry(s).or_default() |= bit,
                    Shape::AnyDepthName(n) => *table.names.entry(n).or_default() |= bit,
                    Shape::AnyDepthDir(d) => *table.dirs.entry(d).or_default() |= bit,
                    Shape::AnyDepthWild(ref w) if required_ext(w).is_some() => {
                        let ext = required_ext(w).unwrap_or_default().to_string();
                        table.by_ext.entry(ext).or_default().push((w.clone(), bit));
                    }
                    _ => table.others.push((glob, bit)),
                }
            }
        }
        Ok(table)
    }

    /// The sets that match the path, as bits.
    pub fn mask(&self, path: &Candidate) -> u64 {
        let mut mask = self.names.get(path.name).copied().unwrap_or(0);
        if !self.exact.is_empty() {
            mask |= self.exact.get(path.text).copied().unwrap_or(0);
        }
        if !self.dirs.is_empty() {
            for dir in path.dirs() {
                mask |= self.dirs.get(dir).copied().unwrap_or(0);
            }
        }
        if let Some(wilds) = self.by_ext.get(ext(path.name)) {
            for (w, bit) in wilds {
                if mask & bit == 0 && w.matches(path.name) {
                    mask |= bit;
                }
            }
        }
        for (glob, bit) in &self.others {
            if mask & bit == 0 && glob.matches(path) {
                mask |= bit;
            }
        }
        mask
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
    fn a_table_answers_every_set_at_once() {
        let sets: [&[&str]; 3] = [
            &["**/package.json", "docs/**"],
            &["**/tests/**", "**/*_test.*", "Makefile"],
            &["src/*/mod.rs", "**/*.r?"],
        ];
        let table = GlobTable::new(&sets).unwrap();
        let mask = |p: &str| table.mask(&Candidate::new(p));
        assert_eq!(mask("package.json"), 0b001);
        assert_eq!(mask("docs/tests/package.json"), 0b011);
        assert_eq!(mask("Makefile"), 0b010);
        assert_eq!(mask("src/a/mod.rs"), 0b100);
        assert_eq!(mask("src/a_test.rs"), 0b110);
        assert_eq!(mask("tests"), 0);
        assert_eq!(mask("x/y.txt"), 0);
        assert_eq!(mask("x/y.rs"), 0b100);
        assert_eq!(mask("x/y.rb"), 0b100);
        let many: Vec<&[&str]> = vec![&["a"]; MAX_SETS + 1];
        assert!(GlobTable::new(&many).is_err());
    }

    #[test]
    fn stars_with_several_pieces() {
        assert!(m("a*b*c", "abc"));
        assert!(m("a*b*c", "aXbYc"));
        assert!(!m("a*b*c", "acb"));
        assert!(!m("ab*ba", "aba"));
        assert!(m("**/*_test.*", "pkg/x_test.go"));
        assert!(!m("**/*_test.*", "pkg/x_test"));
        assert!(m("**/a*b/**", "x/aXb/y"));
    }

    #[test]
    fn empty_patterns_are_refused() {
        assert!(Glob::new("").is_err());
        assert!(Glob::new("./").is_err());
    }
}
