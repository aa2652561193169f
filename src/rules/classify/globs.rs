//! Path globs for the rules table, matched by ripgrep's `globset`.
//!
//! A pattern is matched against the whole path. `*` matches any run of characters inside one
//! segment and `?` one byte; neither crosses a `/`. A segment that is exactly `**` matches any
//! number of segments, none included, so `**/package.json` matches `package.json` too, and a
//! trailing `/**` needs something under it. `[abc]`, `[!abc]` and `{a,b}` are globset's, and `\`
//! escapes the character after it. Paths and patterns lose a leading `./`, doubled slashes and
//! a trailing slash first.

use globset::{Candidate, Glob, GlobBuilder, GlobSet, GlobSetBuilder};

pub use crate::records::printable::normalize_path as normalize;

/// Compiles one pattern, normalised, with `*` and `?` kept inside a segment; an empty one is
/// refused.
fn glob(pattern: &str) -> Result<Glob, String> {
    let norm = normalize(pattern.trim());
    if norm.is_empty() {
        return Err(format!("empty glob {pattern:?}"));
    }
    GlobBuilder::new(&norm)
        .literal_separator(true)
        .build()
        .map_err(|e| e.to_string())
}

/// The most sets one [`GlobSets`] holds.
pub const MAX_SETS: usize = 64;

/// Up to 64 sets of globs tested together: [`GlobSets::mask`] answers, for one path, which
/// sets match it, as bits. Each set is one `GlobSet`, which tests all its patterns in one pass.
#[derive(Clone, Debug, Default)]
pub struct GlobSets {
    sets: Vec<GlobSet>,
}

impl GlobSets {
    /// Set `i` of `sets` answers as bit `i`.
    pub fn new<S: AsRef<str>>(sets: &[&[S]]) -> Result<GlobSets, String> {
        if sets.len() > MAX_SETS {
            return Err(format!("more than {MAX_SETS} sets of globs"));
        }
        let sets = sets
            .iter()
            .map(|patterns| {
                let mut set = GlobSetBuilder::new();
                for p in patterns.iter() {
                    set.add(glob(p.as_ref())?);
                }
                set.build().map_err(|e| e.to_string())
            })
            .collect::<Result<_, String>>()?;
        Ok(GlobSets { sets })
    }

    /// The sets that match the (normalised) path, as bits.
    pub fn mask(&self, path: &str) -> u64 {
        let path = Candidate::new(path);
        self.sets
            .iter()
            .enumerate()
            .filter(|(_, set)| set.is_match_candidate(&path))
            .fold(0, |mask, (i, _)| mask | 1 << i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        let one = GlobSets::new(&[&[pattern]]).unwrap();
        one.mask(&normalize(path)) == 1
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
    fn question_mark_is_one_byte() {
        assert!(m("a?c", "abc"));
        // globset matches bytes: a character outside ASCII takes one `?` per byte.
        assert!(!m("a?c", "aéc"));
        assert!(m("a??c", "aéc"));
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
        assert!(m("a//**/b/", "./a/x/b"));
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
        let table = GlobSets::new(&sets).unwrap();
        let mask = |p: &str| table.mask(p);
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
        assert!(GlobSets::new(&many).is_err());
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
    fn classes_alternatives_and_escapes_are_globsets() {
        assert!(m("**/*.{js,ts}", "src/a.ts"));
        assert!(!m("**/*.{js,ts}", "src/a.rs"));
        assert!(m("pkg/[ab]/x", "pkg/a/x"));
        assert!(!m("pkg/[!ab]/x", "pkg/a/x"));
        assert!(m(r"app/\[id\]/page.tsx", "app/[id]/page.tsx"));
    }

    #[test]
    fn empty_patterns_are_refused() {
        assert!(GlobSets::new(&[&[""]]).is_err());
        assert!(GlobSets::new(&[&["./"]]).is_err());
    }

    #[test]
    fn malformed_patterns_are_refused_by_name() {
        let err = GlobSets::new(&[&["a", "src/[ab"]]).unwrap_err();
        assert!(err.contains("src/[ab"), "{err}");
    }
}
