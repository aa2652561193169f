//! Path globs for the rules table, matched by a small automaton of our own.
//!
//! A pattern is matched against the whole path, as bytes. `*` matches any run of bytes inside one
//! segment and `?` one byte; neither crosses a `/`. A segment that is exactly `**` matches any
//! number of segments, none included, so `**/package.json` matches `package.json` too, and a
//! trailing `/**` needs something under it; any other `**` is a `*`. A class (`[abc]`, `[a-z]`,
//! `[!abc]` or `[^abc]`, `[[:alpha:]]`) matches one byte that is not `/`: a character outside
//! ASCII in a class stands for its bytes, so write such characters outside classes. `{a,b}`
//! matches either, nested too, and an empty alternative is dropped (`{,a}` is `a`). `\` escapes
//! the character after it. These are the globs of ripgrep's globset built with
//! `literal_separator`, odd corners included, and a test holds the two together; globset's set
//! alone declines a name `..` to `**/..`, `**/*.` and `*.`, where this matches it. Paths and
//! patterns lose a leading `./`, doubled slashes and a trailing slash first.

use std::collections::{HashMap, HashSet};
use std::iter::Peekable;
use std::str::Chars;
use std::sync::{Mutex, PoisonError};

pub use crate::records::printable::normalize_path as normalize;

/// The most sets one [`GlobSets`] holds.
pub const MAX_SETS: usize = 64;

/// How deep `{…}` may nest (globset's bound): compiling recurses once a level.
const MAX_NESTING: usize = 100;

/// A pattern as globset's parser reads it: where a `**` spans segments hangs on its rules.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    Literal(char),
    /// `?`: one byte but `/`.
    Any,
    /// `*`: any bytes but `/`.
    Star,
    /// A leading `**/`: nothing, or anything that ends in `/`.
    AnyPrefix,
    /// A trailing `/**`: `/`, then anything.
    AnySuffix,
    /// An inner `/**/`: `/`, or `/`, anything, `/`.
    AnyMiddle,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Alternates(Vec<Vec<Token>>),
}

/// A port of globset 0.4's parser, quirks kept: `**` is decided by the characters around it.
struct Parser<'a> {
    chars: Peekable<Chars<'a>>,
    prev: Option<char>,
    cur: Option<char>,
    /// Where each open `{` starts in `branches`.
    open: Vec<usize>,
    /// The token lists being read; the last one takes the next token.
    branches: Vec<Vec<Token>>,
}

/// Parses a (normalised) pattern, or says what is wrong with it.
fn parse(pattern: &str) -> Result<Vec<Token>, String> {
    let mut p = Parser {
        chars: pattern.chars().peekable(),
        prev: None,
        cur: None,
        open: Vec::new(),
        branches: vec![Vec::new()],
    };
    while let Some(c) = p.bump() {
        match c {
            '?' => p.push(Token::Any),
            '*' => p.star(),
            '[' => p.class()?,
            '{' if p.open.len() >= MAX_NESTING => {
                return Err(format!("{{ nested more than {MAX_NESTING} deep"));
            }
            '{' => {
                p.open.push(p.branches.len());
                p.branches.push(Vec::new());
            }
            '}' => {
                let start = p.open.pop().ok_or("a } with no { before it")?;
                let alternates = p.branches.split_off(start);
                p.push(Token::Alternates(alternates));
            }
            ',' if !p.open.is_empty() => p.branches.push(Vec::new()),
            '\\' => {
                let c = p.bump().ok_or("a \\ with nothing after it")?;
                p.push(Token::Literal(c));
            }
            c => p.push(Token::Literal(c)),
        }
    }
    if !p.open.is_empty() {
        return Err("a { with no } after it".into());
    }
    Ok(p.branches.pop().unwrap_or_default())
}

impl Parser<'_> {
    fn bump(&mut self) -> Option<char> {
        self.prev = self.cur;
        self.cur = self.chars.next();
        self.cur
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn push(&mut self, token: Token) {
        if let Some(branch) = self.branches.last_mut() {
            branch.push(token);
        }
    }

    /// After a `*`. globset's rules, to the letter: a `**` spans segments when it starts the
    /// pattern (or an alternative) before a `/` or the end, or follows a `/` and comes before
    /// a `/`, the end, or (in an alternative) a `,` or `}`; any other `**` is a `*`.
    fn star(&mut self) {
        let prev = self.prev;
        if self.peek() != Some('*') {
            return self.push(Token::Star);
        }
        self.bump();
        if self.branches.last().is_none_or(Vec::is_empty) {
            if self.peek().is_some_and(|c| c != '/') {
                return self.push(Token::Star);
            }
            self.bump();
            return self.push(Token::AnyPrefix);
        }
        let nested = self.branches.len() > 1;
        if prev != Some('/') && !(nested && matches!(prev, Some(',' | '{'))) {
            return self.push(Token::Star);
        }
        let suffix = match self.peek() {
            None => true,
            Some(',' | '}') if nested => true,
            Some('/') => {
                self.bump();
                false
            }
            _ => return self.push(Token::Star),
        };
        // The token before (the `/`, as a rule) gives way, as in globset.
        let token = match self.branches.last_mut().and_then(Vec::pop) {
            Some(t @ (Token::AnyPrefix | Token::AnySuffix)) => t,
            _ if suffix => Token::AnySuffix,
            _ => Token::AnyMiddle,
        };
        self.push(token);
    }

    /// After a `[`: a `]` or `-` first is literal, as is a `-` last.
    fn class(&mut self) -> Result<(), String> {
        let negated = matches!(self.peek(), Some('!' | '^'));
        if negated {
            self.bump();
        }
        let mut ranges: Vec<(char, char)> = Vec::new();
        let (mut first, mut in_range) = (true, false);
        loop {
            let c = self.bump().ok_or("a [ with no ] after it")?;
            match c {
                ']' | '-' if first => ranges.push((c, c)),
                ']' => break,
                '-' if !in_range => in_range = true,
                '[' if !in_range && self.peek() == Some(':') => {
                    ranges.extend_from_slice(self.posix().unwrap_or(&[('[', '[')]));
                }
                c if in_range => {
                    let last = ranges.last_mut().ok_or("a range with no start")?;
                    last.1 = c;
                    if last.1 < last.0 {
                        return Err(format!("the range {}-{} runs backwards", last.0, last.1));
                    }
                    in_range = false;
                }
                c => ranges.push((c, c)),
            }
            first = false;
        }
        if in_range {
            ranges.push(('-', '-'));
        }
        self.push(Token::Class { negated, ranges });
        Ok(())
    }

    /// After a `[` inside a class, before a `:`: a `[:name:]` class's ranges, or None with
    /// nothing read; an unknown name that is closed is read all the same, as in globset.
    fn posix(&mut self) -> Option<&'static [(char, char)]> {
        let saved = (self.chars.clone(), self.prev, self.cur);
        self.bump();
        let mut name = String::new();
        loop {
            match self.bump() {
                Some(':') if self.peek() == Some(']') => {
                    self.bump();
                    return posix_ranges(&name);
                }
                Some(c) if c.is_ascii_lowercase() && name.len() < 8 => name.push(c),
                _ => {
                    (self.chars, self.prev, self.cur) = saved;
                    return None;
                }
            }
        }
    }
}

/// The POSIX classes, ASCII only.
fn posix_ranges(name: &str) -> Option<&'static [(char, char)]> {
    Some(match name {
        "alnum" => &[('0', '9'), ('A', 'Z'), ('a', 'z')],
        "alpha" => &[('A', 'Z'), ('a', 'z')],
        "blank" => &[('\t', '\t'), (' ', ' ')],
        "cntrl" => &[('\x00', '\x1f'), ('\x7f', '\x7f')],
        "digit" => &[('0', '9')],
        "graph" => &[('!', '~')],
        "lower" => &[('a', 'z')],
        "print" => &[(' ', '~')],
        "punct" => &[('!', '/'), (':', '@'), ('[', '`'), ('{', '~')],
        "space" => &[('\t', '\r'), (' ', ' ')],
        "upper" => &[('A', 'Z')],
        "xdigit" => &[('0', '9'), ('A', 'F'), ('a', 'f')],
        _ => return None,
    })
}

/// A set of bytes.
type Bytes = [u64; 4];

const ALL: Bytes = [u64::MAX; 4];
const NOT_SLASH: Bytes = [!(1 << b'/'), u64::MAX, u64::MAX, u64::MAX];

fn has(set: &Bytes, b: u8) -> bool {
    set[usize::from(b >> 6)] >> (b & 63) & 1 == 1
}

fn add(set: &mut Bytes, b: u8) {
    set[usize::from(b >> 6)] |= 1 << (b & 63);
}

fn one(b: u8) -> Bytes {
    let mut set = [0; 4];
    add(&mut set, b);
    set
}

/// A class's bytes. globset writes a class into a bytes regex with each character as its
/// UTF-8 bytes, so `x-y` spans x's last byte to y's first, and never `/`.
fn class_bytes(negated: bool, ranges: &[(char, char)]) -> Bytes {
    let mut set = [0; 4];
    for &(lo, hi) in ranges {
        let (mut a, mut b) = ([0; 4], [0; 4]);
        let (lo, hi) = (
            lo.encode_utf8(&mut a).as_bytes(),
            hi.encode_utf8(&mut b).as_bytes(),
        );
        if lo == hi {
            lo.iter().for_each(|&x| add(&mut set, x));
            continue;
        }
        let (lo_last, hi_rest) = (lo.len() - 1, &hi[1..]);
        lo[..lo_last].iter().for_each(|&x| add(&mut set, x));
        (lo[lo_last]..=hi[0]).for_each(|x| add(&mut set, x));
        hi_rest.iter().for_each(|&x| add(&mut set, x));
    }
    if negated {
        set = set.map(|w| !w);
    }
    set[0] &= !(1 << b'/');
    set
}

/// Whether globset writes anything for these tokens: an alternative it writes nothing for is
/// dropped, so `{,a}` is `a` and `{}` matches nothing but the empty string.
fn written(tokens: &[Token]) -> bool {
    tokens.iter().any(|t| match t {
        Token::Alternates(branches) => branches.iter().any(|b| written(b)),
        _ => true,
    })
}

/// One node of the compiled patterns: a state of a Thompson NFA.
#[derive(Clone, Debug)]
enum Node {
    /// Reads one byte of the set, then on to the next node.
    Byte(Bytes),
    /// On to both, reading nothing.
    Fork(usize, usize),
    Jump(usize),
    /// A path read to its end here matches this set.
    Match(usize),
}

/// All the patterns of all the sets, and the classes of bytes no node tells apart.
#[derive(Debug, Default)]
struct Nfa {
    nodes: Vec<Node>,
    /// Where each pattern starts.
    starts: Vec<usize>,
    /// Each byte's class (256 of them).
    class_of: Vec<u8>,
    /// One byte of each class.
    sample: Vec<u8>,
}

impl Nfa {
    fn push(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// `body`, or nothing.
    fn optional(&mut self, body: impl FnOnce(&mut Nfa)) {
        let fork = self.push(Node::Fork(0, 0));
        body(self);
        self.nodes[fork] = Node::Fork(fork + 1, self.nodes.len());
    }

    /// Any number of bytes of `set`.
    fn repeat(&mut self, set: Bytes) {
        self.optional(|n| {
            let fork = n.nodes.len() - 1;
            n.push(Node::Byte(set));
            n.push(Node::Jump(fork));
        });
    }

    fn pattern(&mut self, tokens: &[Token], set: usize) {
        self.starts.push(self.nodes.len());
        // A pattern that is only `**` matches everything, the empty path included.
        if tokens == [Token::AnyPrefix] {
            self.repeat(ALL);
        } else {
            self.tokens(tokens);
        }
        self.push(Node::Match(set));
    }

    fn tokens(&mut self, tokens: &[Token]) {
        for token in tokens {
            match token {
                Token::Literal(c) => {
                    for &b in c.encode_utf8(&mut [0; 4]).as_bytes() {
                        self.push(Node::Byte(one(b)));
                    }
                }
                Token::Any => _ = self.push(Node::Byte(NOT_SLASH)),
                Token::Star => self.repeat(NOT_SLASH),
                Token::AnyPrefix => self.optional(|n| {
                    n.repeat(ALL);
                    n.push(Node::Byte(one(b'/')));
                }),
                Token::AnySuffix => {
                    self.push(Node::Byte(one(b'/')));
                    self.repeat(ALL);
                }
                Token::AnyMiddle => {
                    self.push(Node::Byte(one(b'/')));
                    self.optional(|n| {
                        n.repeat(ALL);
                        n.push(Node::Byte(one(b'/')));
                    });
                }
                Token::Class { negated, ranges } => {
                    self.push(Node::Byte(class_bytes(*negated, ranges)));
                }
                Token::Alternates(branches) => self.alternates(branches),
            }
        }
    }

    fn alternates(&mut self, branches: &[Vec<Token>]) {
        let kept: Vec<&Vec<Token>> = branches.iter().filter(|b| written(b)).collect();
        let mut jumps = Vec::new();
        for (i, branch) in kept.iter().enumerate() {
            if i + 1 == kept.len() {
                self.tokens(branch);
            } else {
                let fork = self.push(Node::Fork(0, 0));
                self.tokens(branch);
                jumps.push(self.push(Node::Jump(0)));
                self.nodes[fork] = Node::Fork(fork + 1, self.nodes.len());
            }
        }
        let end = self.nodes.len();
        for jump in jumps {
            self.nodes[jump] = Node::Jump(end);
        }
    }

    /// Splits the bytes into classes that every node treats alike, so the DFA's table has a
    /// column a class rather than a byte.
    fn classify_bytes(&mut self) {
        let mut class_of = vec![0u8; 256];
        let mut seen = HashSet::new();
        for node in &self.nodes {
            let Node::Byte(set) = node else { continue };
            if !seen.insert(*set) {
                continue;
            }
            let (mut split, mut count) = ([[u16::MAX; 2]; 256], 0);
            for b in 0..=255u8 {
                let id =
                    &mut split[usize::from(class_of[usize::from(b)])][usize::from(has(set, b))];
                if *id == u16::MAX {
                    *id = count;
                    count += 1;
                }
                // A partition of 256 bytes has at most 256 classes.
                class_of[usize::from(b)] = *id as u8;
            }
        }
        let classes = class_of.iter().map(|&c| usize::from(c)).max().unwrap_or(0) + 1;
        self.sample = (0..classes)
            .map(|c| {
                (0..=255u8)
                    .find(|&b| usize::from(class_of[usize::from(b)]) == c)
                    .unwrap_or(0)
            })
            .collect();
        self.class_of = class_of;
    }
}

/// Past this many entries held (sets and table), the DFA starts over, so hostile patterns cost
/// time but not memory.
const DFA_BUDGET: usize = 1 << 21;

/// No state: no set matches, whatever follows.
const DEAD: u32 = 0;

/// Not built yet.
const UNKNOWN: u32 = u32::MAX;

/// The sets of NFA nodes a path can be in, each built the first time a path reaches it: a path
/// costs one table look-up a byte once the table is warm, and a new set at most a pass over the
/// NFA, so matching stays linear in the path whatever the patterns.
#[derive(Debug, Default)]
struct Dfa {
    /// The nodes of each state that read a byte or match, sorted.
    sets: Vec<Box<[u32]>>,
    ids: HashMap<Box<[u32]>, u32>,
    /// `next[state * classes + class]`, or UNKNOWN.
    next: Vec<u32>,
    /// The sets a path ending in each state matches, as bits.
    masks: Vec<u64>,
    start: u32,
    held: usize,
    /// The last closure each node was reached in.
    seen: Vec<u32>,
    closure: u32,
}

impl Dfa {
    fn start(&mut self, nfa: &Nfa) -> u32 {
        if self.sets.is_empty() {
            let dead = self.intern(nfa, Box::default());
            debug_assert_eq!(dead, DEAD);
            let start = self.closure(nfa, nfa.starts.iter().copied());
            self.start = self.intern(nfa, start);
        }
        self.start
    }

    /// The state after `from` reads a byte of `class`.
    fn step(&mut self, nfa: &Nfa, from: u32, class: usize) -> u32 {
        let byte = nfa.sample[class];
        let seeds: Vec<usize> = self.sets[from as usize]
            .iter()
            .map(|&s| s as usize)
            .filter(|&s| matches!(&nfa.nodes[s], Node::Byte(set) if has(set, byte)))
            .map(|s| s + 1)
            .collect();
        let set = self.closure(nfa, seeds.into_iter());
        if self.held + 2 * set.len() + nfa.sample.len() > DFA_BUDGET {
            *self = Dfa::default();
            self.start(nfa);
            return self.intern(nfa, set);
        }
        let to = self.intern(nfa, set);
        self.next[from as usize * nfa.sample.len() + class] = to;
        to
    }

    /// The nodes reached from `seeds` reading nothing, those that read or match kept.
    fn closure(&mut self, nfa: &Nfa, seeds: impl Iterator<Item = usize>) -> Box<[u32]> {
        if self.seen.len() != nfa.nodes.len() || self.closure == u32::MAX {
            self.seen = vec![0; nfa.nodes.len()];
            self.closure = 0;
        }
        self.closure += 1;
        let mut stack: Vec<usize> = seeds.collect();
        let mut set = Vec::new();
        while let Some(s) = stack.pop() {
            if std::mem::replace(&mut self.seen[s], self.closure) == self.closure {
                continue;
            }
            match nfa.nodes[s] {
                Node::Fork(a, b) => stack.extend([b, a]),
                Node::Jump(a) => stack.push(a),
                Node::Byte(_) | Node::Match(_) => set.push(s as u32),
            }
        }
        set.sort_unstable();
        set.into()
    }

    fn intern(&mut self, nfa: &Nfa, set: Box<[u32]>) -> u32 {
        if let Some(&id) = self.ids.get(&set) {
            return id;
        }
        let id = self.sets.len() as u32;
        let mask = set.iter().fold(0, |m, &s| match nfa.nodes[s as usize] {
            Node::Match(i) => m | 1 << i,
            _ => m,
        });
        let classes = nfa.sample.len();
        self.held += 2 * set.len() + classes;
        self.next.extend(std::iter::repeat_n(UNKNOWN, classes));
        self.masks.push(mask);
        self.sets.push(set.clone());
        self.ids.insert(set, id);
        id
    }
}

/// `**/name` with no `/` or wildcard in the name: most globs of the default table. They are
/// matched by looking the path's last segment up, which keeps the automaton small.
fn basename(tokens: &[Token]) -> Option<String> {
    let [Token::AnyPrefix, rest @ ..] = tokens else {
        return None;
    };
    let literal = |t: &Token| match t {
        Token::Literal(c) if *c != '/' => Some(*c),
        _ => None,
    };
    let name: String = rest.iter().map(literal).collect::<Option<_>>()?;
    (!name.is_empty()).then_some(name)
}

/// Up to 64 sets of globs tested together: [`GlobSets::mask`] answers, for one path, which
/// sets match it, as bits, in one pass over the path.
#[derive(Debug)]
pub struct GlobSets {
    /// The sets each `**/name` glob's name is in, as bits.
    basenames: HashMap<String, u64>,
    nfa: Nfa,
    /// Built as paths are matched; behind a lock so that matching takes `&self`.
    dfa: Mutex<Dfa>,
}

/// Parses one pattern, normalised; an empty one is refused, and an error names the pattern.
fn glob(pattern: &str) -> Result<Vec<Token>, String> {
    let norm = normalize(pattern.trim());
    if norm.is_empty() {
        return Err(format!("empty glob {pattern:?}"));
    }
    parse(&norm).map_err(|why| format!("glob {pattern:?}: {why}"))
}

impl GlobSets {
    /// Set `i` of `sets` answers as bit `i`.
    pub fn new<S: AsRef<str>>(sets: &[&[S]]) -> Result<GlobSets, String> {
        if sets.len() > MAX_SETS {
            return Err(format!("more than {MAX_SETS} sets of globs"));
        }
        let (mut basenames, mut nfa) = (HashMap::new(), Nfa::default());
        for (i, patterns) in sets.iter().enumerate() {
            for p in patterns.iter() {
                let tokens = glob(p.as_ref())?;
                match basename(&tokens) {
                    Some(name) => *basenames.entry(name).or_default() |= 1 << i,
                    None => nfa.pattern(&tokens, i),
                }
            }
        }
        if u32::try_from(nfa.nodes.len()).is_err() {
            return Err("globs too long".into());
        }
        nfa.classify_bytes();
        Ok(GlobSets {
            basenames,
            nfa,
            dfa: Mutex::default(),
        })
    }

    /// The sets that match the (normalised) path, as bits.
    pub fn mask(&self, path: &str) -> u64 {
        let name = path.rsplit('/').next().unwrap_or(path);
        self.basenames.get(name).copied().unwrap_or(0) | self.run(path)
    }

    /// The sets the automaton's globs match.
    fn run(&self, path: &str) -> u64 {
        let nfa = &self.nfa;
        let mut dfa = self.dfa.lock().unwrap_or_else(PoisonError::into_inner);
        let mut state = dfa.start(nfa);
        for &b in path.as_bytes() {
            if state == DEAD {
                return 0;
            }
            let class = usize::from(nfa.class_of[usize::from(b)]);
            state = match dfa.next[state as usize * nfa.sample.len() + class] {
                UNKNOWN => dfa.step(nfa, state, class),
                next => next,
            };
        }
        dfa.masks[state as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::bootstrap::Rng;

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
        let deep = format!("{}a{}", "{".repeat(MAX_NESTING), "}".repeat(MAX_NESTING));
        assert!(m(&deep, "a"));
        let deeper = format!("{{{deep}}}");
        assert!(
            GlobSets::new(&[&[deeper.as_str()]])
                .unwrap_err()
                .contains("nested")
        );
    }

    #[test]
    fn hostile_patterns_stay_linear() {
        let long = "a".repeat(4096);
        assert!(!m(&format!("{}b", "*a".repeat(12)), &long));
        assert!(m(&format!("{}a", "*a".repeat(12)), &long));
        assert!(!m(&"{*a,*b,?}".repeat(12), &format!("{long}/a")));
        let dirs = "a/".repeat(2048);
        assert!(!m(&"**/a/".repeat(8), &format!("{dirs}b")));
        assert!(m(&format!("{}x", "**/".repeat(5)), &format!("{dirs}x")));
        assert!(m("**/a/**/a/**/a/**/a/**/a/**/b", &format!("{dirs}b")));
        assert!(!m("**/a/**/a/**/a/**/a/**/a/**/b", &format!("{dirs}c")));
    }

    #[test]
    fn a_dfa_too_big_to_keep_starts_over() {
        // `*a` and 39 `?`: a DFA needs 2^40 states to remember the last 40 bytes, so random
        // paths make a new one at nearly every byte until the budget is spent, and matching
        // goes on.
        let table = GlobSets::new(&[&[format!("*a{}", "?".repeat(39))]]).unwrap();
        let mut rng = Rng::for_figure("a dfa too big");
        for _ in 0..24 {
            let path: String = (0..4096).map(|_| rng.pick(&["a", "b"])).collect();
            let want = path.as_bytes()[path.len() - 40] == b'a';
            assert_eq!(table.mask(&path) == 1, want);
        }
        // Kept whole, the states would hold twice the budget.
        assert!(table.dfa.lock().unwrap().held <= DFA_BUDGET);
    }

    /// globset built as this module's forerunner built it: one `GlobSet` of one glob.
    fn globset(pattern: &str) -> Option<(globset::GlobSet, globset::GlobMatcher)> {
        let norm = normalize(pattern.trim());
        if norm.is_empty() {
            return None;
        }
        let glob = globset::GlobBuilder::new(&norm)
            .literal_separator(true)
            .build()
            .ok()?;
        let set = globset::GlobSetBuilder::new()
            .add(glob.clone())
            .build()
            .ok()?;
        Some((set, glob.compile_matcher()))
    }

    /// Pattern pieces, each with paths it may stand for (or not quite, to miss too).
    const PIECES: &[(&str, &[&str])] = &[
        ("a", &["a"]),
        ("b", &["b", "a"]),
        ("/", &["/", "", "//"]),
        (".", &["."]),
        ("é", &["é"]),
        ("*", &["", "a", "ab.", "é", "/"]),
        ("*", &["", "b", ".a"]),
        ("**", &["", "ab", "a/b", "/"]),
        ("?", &["a", "é", "/", ""]),
        ("[ab]", &["a", "b", "é"]),
        ("[!a]", &["b", "a", "é", "/"]),
        ("{a,b}", &["a", "b", ""]),
        (r"\*", &["*", "a"]),
        ("**/", &["", "a/", "a/b/", "/", "a"]),
        ("/**", &["/a", "/", "", "/a/b"]),
        ("/**/", &["/", "/a/", "//", "/a/b/", "a"]),
        ("[é]", &["é", "a"]),
        ("[!/]", &["a", "/", "é"]),
        ("[a-é]", &["b", "é", "/"]),
        ("[]a]", &["]", "a"]),
        ("[a-]", &["-", "a"]),
        ("{a,**/b}", &["a", "b", "a/b", "ab", "/b"]),
        ("{**,a}", &["a", "", "ab", "a/b"]),
        ("{a/**,b}", &["a/", "a/b", "b", "a"]),
        ("{,a}", &["", "a"]),
        ("{}", &["", "a"]),
        ("{a,{b,}}", &["a", "b", ""]),
        ("{{},a}", &["a", ""]),
        (r"{a\,**}", &["a/b", "a,", "a,b", "a/"]),
        (r"{b,\{**/a}", &["a", "{/a", "{a", "b"]),
        ("[[:alpha:]]", &["a", "é", "."]),
        ("[[:x:]]", &["[]", "[", "x"]),
        ("[[:alphabets:]]", &["a", "s:]", ":"]),
        ("[/-a]", &["a", "0", "/"]),
        (r"\,", &[","]),
        ("{/**}", &["/a", "/", ""]),
        ("./", &["", "./"]),
        ("//", &["/", "//"]),
        (",", &[","]),
        ("-", &["-"]),
    ];

    /// Pieces that may break a pattern: one pattern in eight has one.
    const BAD: &[&str] = &["{", "}", "[", "]", "\\", "[b-a]", "[!", "{a,"];

    /// Pieces of paths that need not come from a pattern.
    const PATH: &[&str] = &["a", "b", "/", "/", ".", "é", "ab", "..", "*", ",", "[", "-"];

    #[test]
    fn agrees_with_globset() {
        let mut rng = Rng::for_figure("globset");
        let (mut pairs, mut matched, mut refused) = (0, 0, 0);
        for _ in 0..2_200 {
            let pieces: Vec<_> = (0..1 + rng.below(6)).map(|_| rng.pick(PIECES)).collect();
            let mut pattern: String = pieces.iter().map(|p| p.0).collect();
            if rng.below(8) == 0 {
                pattern.insert_str(0, rng.pick(BAD));
            }
            let ours = GlobSets::new(&[&[pattern.as_str()]]);
            let Some((set, regex)) = globset(&pattern) else {
                assert!(ours.is_err(), "globset refuses {pattern:?}, we do not");
                refused += 1;
                continue;
            };
            let ours = ours.unwrap_or_else(|e| panic!("we refuse {pattern:?}: {e}"));
            for i in 0..10 {
                let path: String = if i < 6 {
                    pieces.iter().map(|p| rng.pick(p.1)).collect()
                } else {
                    (0..rng.below(9)).map(|_| rng.pick(PATH)).collect()
                };
                // globset's set declines a name `..` to its fast paths; its regex does not.
                let theirs = if path == ".." || path.ends_with("/..") {
                    regex.is_match(&path)
                } else {
                    set.is_match(&path)
                };
                assert_eq!(
                    ours.mask(&path) == 1,
                    theirs,
                    "{pattern:?} against {path:?}"
                );
                pairs += 1;
                matched += usize::from(theirs);
            }
        }
        println!("{pairs} pairs, {matched} matched, {refused} patterns refused");
        assert!(pairs >= 20_000 && matched > 3_000 && refused > 100);
    }
}
