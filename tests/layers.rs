//! The house's layers, read from the source (docs/design.md §2): stats < records < contracts,
//! engine < rules < tools. No file imports a layer above its own, and no two files import each other,
//! however indirectly (a folder's mod.rs and the files in it excepted: it is their front).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module of the library (`engine::call::launcher`), its code without comment lines and without
/// its `mod tests`.
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("bin") {
                    walk(&path, out);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") || path.ends_with("src/lib.rs") {
                continue;
            }
            let rel = path.strip_prefix("src").unwrap().with_extension("");
            let name = rel.to_str().unwrap().replace('/', "::");
            let name = name.strip_suffix("::mod").unwrap_or(&name).to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
            let code: Vec<&str> = code
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect();
            out.insert(name, code.join("\n"));
        }
    }
    let mut out = BTreeMap::new();
    walk(Path::new("src"), &mut out);
    out
}

/// The paths a module's code names through `crate::` (a `{…}` group read as its members) and
/// `super::`, as module paths from the crate's root; not yet resolved to a module.
fn paths_named(module: &str, code: &str) -> Vec<String> {
    let ident = |s: &str| -> usize {
        s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len())
    };
    let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
    let mut out = Vec::new();
    for (prefix, root) in [("crate::", String::new()), ("super::", parent.to_string())] {
        let mut rest = code;
        while let Some(at) = rest.find(prefix) {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + prefix.len()..];
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            // Segments up to a group, a non-path character or the end.
            let mut path = root.clone();
            let mut s = rest;
            loop {
                let n = ident(s);
                if n == 0 {
                    if let Some(group) = s.strip_prefix('{') {
                        let group = &group[..group.find('}').unwrap_or(group.len())];
                        for member in group.split(',') {
                            let member = member.trim();
                            let m = &member[..ident(member)];
                            if !m.is_empty() && m != "self" {
                                out.push(join(&path, m));
                            }
                        }
                    }
                    break;
                }
                path = join(&path, &s[..n]);
                match s[n..].strip_prefix("::") {
                    Some(more) => s = more,
                    None => break,
                }
            }
            out.push(path);
        }
    }
    out
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}::{b}")
    }
}

/// Each module and the modules it imports: a path resolved to the longest module it starts
/// with, its own folder's front and members left out.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules();
    let resolve = |path: &str| -> Option<String> {
        let parts: Vec<&str> = path.split("::").collect();
        (1..=parts.len())
            .rev()
            .map(|n| parts[..n].join("::"))
            .find(|m| modules.contains_key(m))
    };
    let related = |a: &str, b: &str| {
        a == b || a.starts_with(&format!("{b}::")) || b.starts_with(&format!("{a}::"))
    };
    modules
        .iter()
        .map(|(name, code)| {
            let targets = paths_named(name, code)
                .iter()
                .filter_map(|p| resolve(p))
                .filter(|t| !related(name, t))
                .collect();
            (name.clone(), targets)
        })
        .collect()
}

fn layer(module: &str) -> Option<u8> {
    match module.split("::").next()? {
        // Arithmetic on numbers: it names no record, and every layer may read it.
        "stats" => Some(0),
        "records" => Some(1),
        "contracts" | "engine" => Some(2),
        "rules" => Some(3),
        "tools" => Some(4),
        _ => None,
    }
}

#[test]
fn no_file_imports_a_layer_above_its_own() {
    let graph = imports();
    assert!(
        graph.len() > 100,
        "the source was not found: {}",
        graph.len()
    );
    let mut up = Vec::new();
    for (from, targets) in &graph {
        for to in targets {
            if let (Some(a), Some(b)) = (layer(from), layer(to))
                && b > a
            {
                up.push(format!("{from} -> {to}"));
            }
        }
    }
    assert!(up.is_empty(), "imports reaching up: {up:#?}");
}

#[test]
fn no_two_files_import_each_other_however_indirectly() {
    let graph = imports();
    // Tarjan's strongly connected components: each of more than one module is a cycle.
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        cycles: Vec<Vec<&'a str>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            for w in &self.graph[v] {
                let w = w.as_str();
                match self.index.get(w) {
                    None => {
                        self.visit(w);
                        let low = self.index[w].1.min(self.index[v].1);
                        self.index.get_mut(v).unwrap().1 = low;
                    }
                    Some(&(wi, _)) if self.stack.contains(&w) => {
                        let low = wi.min(self.index[v].1);
                        self.index.get_mut(v).unwrap().1 = low;
                    }
                    Some(_) => {}
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let at = self.stack.iter().rposition(|m| *m == v).unwrap();
                let component = self.stack.split_off(at);
                if component.len() > 1 {
                    self.cycles.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph: &graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        cycles: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    assert!(walk.cycles.is_empty(), "import cycles: {:?}", walk.cycles);
}

/// The reader itself: a group, `super::` and a path in a comment are read as they should be,
/// so the two tests above cannot pass by reading nothing.
#[test]
fn the_import_reader_reads_groups_super_and_not_comments() {
    let paths = paths_named(
        "tools::tally::pr",
        "use crate::tools::tally::{markdown, report::Format};\nlet x = super::wording::g10_bar(v);",
    );
    assert!(
        paths.contains(&"tools::tally::markdown".to_string()),
        "{paths:?}"
    );
    assert!(
        paths.contains(&"tools::tally::report".to_string()),
        "{paths:?}"
    );
    assert!(
        paths.contains(&"tools::tally::wording::g10_bar".to_string()),
        "{paths:?}"
    );
    let graph = imports();
    assert!(graph["tools::tally::pr"].contains("tools::tally::wording"));
    assert!(graph["engine::call::launcher"].contains("engine::progress"));
    // progress.rs names the launcher only in a doc comment.
    assert!(!graph["engine::progress"].contains("engine::call::launcher"));
    // The statistics are read by rules and tools, and read nothing of theirs.
    assert!(graph["rules::gold"].contains("stats::agreement"));
    assert!(graph["tools::tally::ledger"].contains("stats::thresholds"));
    assert_eq!(layer("stats::bootstrap"), Some(0));
}

/// The files of the call's room (`engine::call::ask`, …) that a module names from outside
/// `engine`: none may be, the room's door (`engine::call`'s own names) is the way in. The fuzz
/// targets read `extract` itself.
fn past_the_door(module: &str, code: &str, rooms: &BTreeSet<String>) -> Vec<String> {
    if module.starts_with("engine") || module == "fuzz" {
        return Vec::new();
    }
    paths_named(module, code)
        .into_iter()
        .filter(|p| {
            rooms
                .iter()
                .any(|r| p == r || p.starts_with(&format!("{r}::")))
        })
        .collect()
}

#[test]
fn the_tools_reach_a_judges_call_through_its_door_alone() {
    let modules = modules();
    let rooms: BTreeSet<String> = modules
        .keys()
        .filter(|m| m.starts_with("engine::call::"))
        .cloned()
        .collect();
    assert!(rooms.contains("engine::call::launcher"), "{rooms:?}");
    // What this test exists to refuse: a tool reading an internal of the call.
    let internal = "const TAIL: u64 = crate::engine::call::transcript::TAIL as u64;";
    assert_eq!(
        past_the_door("tools::judge::pr", internal, &rooms),
        ["engine::call::transcript::TAIL"]
    );
    let door = "use crate::engine::call::{self, Done, Launcher};";
    assert!(past_the_door("tools::judge::pr", door, &rooms).is_empty());
    let past: Vec<String> = modules
        .iter()
        .flat_map(|(name, code)| {
            past_the_door(name, code, &rooms)
                .into_iter()
                .map(move |p| format!("{name} -> {p}"))
        })
        .collect();
    assert!(past.is_empty(), "past the call's door: {past:#?}");
}

/// The contracts' checks a tool would read a judge's answer map with a second time.
const SECOND_READS: &[&str] = &[
    "check_verdict(",
    "check_votes(",
    "check_grouping(",
    "check_decisions(",
    "review::check(",
    "pairwise::check(",
];

/// Where a tool names one of them, line by line.
fn second_reads(code: &str) -> Vec<&'static str> {
    SECOND_READS
        .iter()
        .copied()
        .filter(|read| code.contains(read))
        .collect()
}

/// A call hands a tool the contract's typed answer or miss (`Done<C::Answer, C::Miss>`): no
/// tool reads a judge's answer map again (issue 49). panel-vote's recorded judge
/// (`--judge replay:FILE`) is read from its file, never a call, and checked there once.
#[test]
fn no_tool_reads_a_judges_answer_a_second_way() {
    // What this test exists to refuse: the verdict record reading the answer again.
    let again = "let read = done.answer.as_ref().map(|a| verdict::check_verdict(a));";
    assert_eq!(second_reads(again), ["check_verdict("]);
    let read: Vec<String> = modules()
        .iter()
        .filter(|(name, _)| name.starts_with("tools::"))
        .flat_map(|(name, code)| {
            let mut reads = second_reads(code);
            if name == "tools::vote" {
                reads.retain(|r| *r != "check_decisions(");
            }
            reads.into_iter().map(move |r| format!("{name}: {r}"))
        })
        .collect();
    assert!(read.is_empty(), "an answer read again: {read:#?}");
}

/// Names and their lines.
type Sizes = Vec<(String, usize)>;

/// Each source file's lines before its `mod tests`, and each function's lines (from its `fn`
/// line to its closing brace, as rustfmt sets it).
fn sizes() -> (Sizes, Sizes) {
    let (mut files, mut functions) = (Vec::new(), Vec::new());
    let mut stack = vec![std::path::PathBuf::from("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
            let lines: Vec<&str> = code.lines().collect();
            files.push((path.display().to_string(), lines.len()));
            for (i, line) in lines.iter().enumerate() {
                let body = line.trim_start();
                let indent = &line[..line.len() - body.len()];
                let words: Vec<&str> = body.split_whitespace().take(4).collect();
                let Some(at) = words.iter().position(|w| *w == "fn") else {
                    continue;
                };
                if !words[..at]
                    .iter()
                    .all(|w| w.starts_with("pub") || ["const", "unsafe", "async"].contains(w))
                {
                    continue;
                }
                let close = format!("{indent}}}");
                let opens = lines[i..]
                    .iter()
                    .position(|l| l.ends_with('{') || l.ends_with(';'));
                let Some(opens) = opens.filter(|&o| lines[i + o].ends_with('{')) else {
                    continue;
                };
                if let Some(end) = lines[i + opens..].iter().position(|l| *l == close) {
                    let name = words[at + 1].split(['(', '<']).next().unwrap();
                    functions.push((format!("{}: {name}", path.display()), opens + end + 1));
                }
            }
        }
    }
    (files, functions)
}

/// Issue 49: "No source file over 800 lines before its tests, no function over 100".
#[test]
fn no_file_is_over_800_lines_before_its_tests_and_no_function_over_100() {
    let (files, functions) = sizes();
    assert!(
        files.len() > 100 && functions.len() > 1000,
        "the source was not read"
    );
    // The reader itself: the longest function it finds is one it must have read whole.
    assert!(functions.iter().any(|(_, n)| *n > 50), "{functions:?}");
    let long: Vec<_> = files.iter().filter(|(_, n)| *n > 800).collect();
    assert!(
        long.is_empty(),
        "files over 800 lines before their tests: {long:?}"
    );
    let long: Vec<_> = functions.iter().filter(|(_, n)| *n > 100).collect();
    assert!(long.is_empty(), "functions over 100 lines: {long:?}");
}

/// Issue 49: "every name that two types share today, one". Each tool's clap `Args` is its own
/// (one a tool module, as clap's derive has it), and `Family` is one type on two platforms.
#[test]
fn no_two_types_share_a_name() {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (module, code) in modules() {
        for line in code.lines() {
            let words: Vec<&str> = line.split_whitespace().take(3).collect();
            let at = match words.first() {
                Some(w) if line.starts_with(w) && w.starts_with("pub") => 1,
                Some(_) if !line.starts_with(' ') => 0,
                _ => continue,
            };
            let (Some(kind), Some(name)) = (words.get(at), words.get(at + 1)) else {
                continue;
            };
            if ["struct", "enum", "trait", "type"].contains(kind) {
                let name = name.split(['<', '(', '{', ';', ':', '=']).next().unwrap();
                seen.entry(name.to_string())
                    .or_default()
                    .push(module.clone());
            }
        }
    }
    assert!(
        seen.contains_key("Seat") && seen.len() > 200,
        "{}",
        seen.len()
    );
    let shared: Vec<_> = seen
        .iter()
        .filter(|(name, modules)| modules.len() > 1 && !["Args", "Family"].contains(&name.as_str()))
        .collect();
    assert!(shared.is_empty(), "names two types share: {shared:?}");
}
