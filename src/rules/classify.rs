//! The classification rules: one table of data (globs and thresholds) and one named function
//! per rule of the seed.

use std::collections::BTreeMap;

use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};

use crate::records::facts::{ChangedFile, PrFacts};
use crate::rules::glob::{Candidate, GlobTable};

/// Every default the classifier uses. `--print-rules` prints it; `--rules FILE` replaces keys
/// of it, or with `"extend": true` adds to them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rules {
    /// A PR is large past this many counted lines.
    pub large_lines: u64,
    /// The security-slice flag needs more counted lines than this.
    pub security_slice_lines: u64,
    /// PR kinds that count as a security slice whatever they touch.
    pub security_kinds: Vec<String>,
    /// Files whose lines are left out of the count (unless they alone pass `largeLines`).
    pub generated: Vec<String>,
    /// Touch flags: a flag is set by any changed path, or rename source, matching its globs.
    pub touches: BTreeMap<String, Vec<String>>,
    /// Touch flags that make a PR g10 at any size.
    pub strict: Vec<String>,
    /// Touch flags whose non-generated paths make a large PR a security slice.
    pub guard: Vec<String>,
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

impl Default for Rules {
    fn default() -> Rules {
        let mut touches = BTreeMap::new();
        touches.insert("dependency".into(), strings(DEPENDENCY));
        touches.insert("authority".into(), strings(AUTHORITY));
        touches.insert("policy".into(), strings(POLICY));
        touches.insert("security".into(), strings(SECURITY));
        touches.insert("tests".into(), strings(TESTS));
        Rules {
            large_lines: 400,
            security_slice_lines: 400,
            security_kinds: strings(&["security"]),
            generated: strings(GENERATED),
            touches,
            strict: strings(&["dependency"]),
            guard: strings(&["security", "authority"]),
        }
    }
}

/// Output of tools, not of hands. The first eight are the seed's; lockfiles and snapshots are
/// deliberately absent, since a change to them is a change to review.
const GENERATED: &[&str] = &[
    "CAPABILITIES.md",
    "site/reference/**",
    "site/reference-sidebar.json",
    "site/guides/capabilities.md",
    ".codewatch/check.json",
    ".codewatch/dead-exports.json",
    ".changeset/*.md",
    "packages/*/api/*.d.ts",
    "**/__generated__/**",
    "**/*.generated.*",
    "**/*.min.js",
    "**/*.min.css",
    "**/*.pb.go",
    "**/*_pb2.py",
    "**/*_pb2.pyi",
];

/// What the code is built from: manifests, lockfiles and workspace files of each ecosystem.
/// The first three are the seed's.
const DEPENDENCY: &[&str] = &[
    // JavaScript and TypeScript
    "**/pnpm-lock.yaml",
    "**/pnpm-workspace.yaml",
    "**/package.json",
    "**/package-lock.json",
    "**/npm-shrinkwrap.json",
    "**/yarn.lock",
    "**/.yarnrc.yml",
    "**/bun.lock",
    "**/bun.lockb",
    "**/deno.json",
    "**/deno.lock",
    "**/.npmrc",
    // Rust
    "**/Cargo.toml",
    "**/Cargo.lock",
    "**/rust-toolchain",
    "**/rust-toolchain.toml",
    ".cargo/config.toml",
    // Go
    "**/go.mod",
    "**/go.sum",
    "**/go.work",
    "**/go.work.sum",
    // Python
    "**/pyproject.toml",
    "**/setup.py",
    "**/setup.cfg",
    "**/requirements*.txt",
    "**/requirements/*.txt",
    "**/constraints*.txt",
    "**/Pipfile",
    "**/Pipfile.lock",
    "**/poetry.lock",
    "**/uv.lock",
    "**/pdm.lock",
    // Ruby
    "**/Gemfile",
    "**/Gemfile.lock",
    "**/*.gemspec",
    // JVM: Maven and Gradle
    "**/pom.xml",
    "**/build.gradle",
    "**/build.gradle.kts",
    "**/settings.gradle",
    "**/settings.gradle.kts",
    "**/gradle.lockfile",
    "**/gradle/libs.versions.toml",
    "**/gradle/wrapper/gradle-wrapper.properties",
    // PHP, .NET, Swift and CocoaPods, Dart, Elixir
    "**/composer.json",
    "**/composer.lock",
    "**/*.csproj",
    "**/Directory.Packages.props",
    "**/packages.lock.json",
    "**/Package.swift",
    "**/Package.resolved",
    "**/Podfile",
    "**/Podfile.lock",
    "**/pubspec.yaml",
    "**/pubspec.lock",
    "**/mix.exs",
    "**/mix.lock",
    // Nix, Bazel, git submodules
    "**/flake.nix",
    "**/flake.lock",
    "**/MODULE.bazel",
    "**/MODULE.bazel.lock",
    "**/WORKSPACE",
    ".gitmodules",
];

/// Who may do what: code owners, and the code that grants or checks permission.
const AUTHORITY: &[&str] = &[
    "CODEOWNERS",
    ".github/CODEOWNERS",
    "docs/CODEOWNERS",
    "**/auth/**",
    "**/authz/**",
    "**/permissions/**",
    "**/rbac/**",
    "**/acl/**",
];

/// What must pass before a change lands: CI, hooks, checks and their configuration.
const POLICY: &[&str] = &[
    ".github/workflows/**",
    ".github/actions/**",
    ".github/rulesets/**",
    ".github/dependabot.yml",
    ".github/settings.yml",
    ".gitlab-ci.yml",
    ".circleci/**",
    ".buildkite/**",
    "Jenkinsfile",
    "azure-pipelines.yml",
    ".pre-commit-config.yaml",
    ".ci/**",
    "**/deny.toml",
    "**/clippy.toml",
    "**/.golangci.yml",
    "**/.golangci.yaml",
    "**/eslint.config.*",
    "**/.eslintrc*",
    "**/policy/**",
    "**/policies/**",
    "**/*.rego",
];

/// Code whose mistakes are vulnerabilities.
const SECURITY: &[&str] = &[
    "SECURITY.md",
    "**/security/**",
    "**/crypto/**",
    "**/*secret*",
    "**/*credential*",
    "**/*password*",
    "**/*.pem",
    "**/sandbox/**",
];

/// Tests, fixtures and snapshots.
const TESTS: &[&str] = &[
    "**/tests/**",
    "**/test/**",
    "**/__tests__/**",
    "**/spec/**",
    "**/testdata/**",
    "**/__snapshots__/**",
    "**/*_test.*",
    "**/*.test.*",
    "**/*.spec.*",
    "**/test_*.py",
    "**/*_spec.rb",
    "**/*Test.java",
    "**/*Tests.cs",
];

/// A rules file: every key optional, plus whether it extends the table instead.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    extend: bool,
    large_lines: Option<u64>,
    security_slice_lines: Option<u64>,
    security_kinds: Option<Vec<String>>,
    generated: Option<Vec<String>>,
    touches: Option<BTreeMap<String, Vec<String>>>,
    strict: Option<Vec<String>>,
    guard: Option<Vec<String>>,
}

/// Appends what `more` adds to `list`, keeping the order and no duplicates.
pub(crate) fn append(list: &mut Vec<String>, more: Vec<String>) {
    for item in more {
        if !list.contains(&item) {
            list.push(item);
        }
    }
}

impl Rules {
    /// Applies a rules file: each key it names replaces the table's, or with `"extend": true`
    /// adds to it (lists appended, numbers replaced). Touch flags count as keys of their own.
    pub fn apply_file(mut self, name: &str, text: &str) -> Result<Rules> {
        let file: RulesFile = crate::records::strict::from_str(text)
            .map_err(|e| crate::records::facts::json_error(name, &e))?;
        if let Some(n) = file.large_lines {
            self.large_lines = n;
        }
        if let Some(n) = file.security_slice_lines {
            self.security_slice_lines = n;
        }
        let lists = [
            (&mut self.security_kinds, file.security_kinds),
            (&mut self.generated, file.generated),
            (&mut self.strict, file.strict),
            (&mut self.guard, file.guard),
        ];
        for (list, given) in lists {
            match given {
                Some(more) if file.extend => append(list, more),
                Some(new) => *list = new,
                None => {}
            }
        }
        // Touch flags are keyed one level down: a flag the file names is replaced (or added
        // to), and the flags it leaves out stay, so one flag can change alone.
        for (flag, globs) in file.touches.unwrap_or_default() {
            let list = self.touches.entry(flag).or_default();
            if file.extend {
                append(list, globs);
            } else {
                *list = globs;
            }
        }
        Ok(self)
    }

    /// Compiles the globs and checks that every flag named in `strict` and `guard` exists.
    pub fn compile(self) -> Result<ClassRules> {
        for (key, flags) in [("strict", &self.strict), ("guard", &self.guard)] {
            for flag in flags {
                if !self.touches.contains_key(flag) {
                    bail!(
                        "rules: {key} names the touch flag {flag:?}, which \"touches\" does not define"
                    );
                }
            }
        }
        if self.touches.len() >= crate::rules::glob::MAX_SETS {
            bail!(
                "rules: at most {} touch flags",
                crate::rules::glob::MAX_SETS - 1
            );
        }
        // Set 0 is the generated globs; set i + 1 is touch flag i, in the table's order.
        let mut sets: Vec<&[String]> = vec![&self.generated];
        sets.extend(self.touches.values().map(Vec::as_slice));
        let globs = GlobTable::new(&sets).map_err(|e| anyhow!("rules: {e}"))?;
        let flags: Vec<String> = self.touches.keys().cloned().collect();
        let bits = |names: &[String]| -> u64 {
            flags
                .iter()
                .enumerate()
                .filter(|(_, f)| names.contains(f))
                .fold(0, |m, (i, _)| m | flag_bit(i))
        };
        Ok(ClassRules {
            globs,
            strict: bits(&self.strict),
            guard: bits(&self.guard),
            flags,
            table: self,
        })
    }
}

const GENERATED_BIT: u64 = 1;

fn flag_bit(i: usize) -> u64 {
    1 << (i + 1)
}

/// The rules table with its globs compiled.
pub struct ClassRules {
    pub table: Rules,
    globs: GlobTable,
    /// The touch flags, in output order; flag i answers as `flag_bit(i)`.
    flags: Vec<String>,
    strict: u64,
    guard: u64,
}

impl Default for ClassRules {
    fn default() -> ClassRules {
        Rules::default()
            .compile()
            .expect("the default rules compile")
    }
}

/// What the globs say of one file: the sets its path matches, and those of the path it was
/// renamed from.
#[derive(Clone, Copy)]
struct Marks {
    path: u64,
    prev: Option<u64>,
}

impl Marks {
    /// Generated: the path is, and so is the path a rename came from.
    fn generated(self) -> bool {
        self.path & GENERATED_BIT != 0 && self.prev.is_none_or(|p| p & GENERATED_BIT != 0)
    }

    /// Touch flags are set by either path.
    fn touches(self) -> u64 {
        (self.path | self.prev.unwrap_or(0)) & !GENERATED_BIT
    }

    /// The path that set `bits`: the changed path, or the rename source when only it did.
    fn setter(self, file: &ChangedFile, bits: u64) -> Option<&str> {
        if self.path & bits != 0 {
            Some(&file.path)
        } else if self.prev.unwrap_or(0) & bits != 0 {
            file.previous_path.as_deref()
        } else {
            None
        }
    }
}

impl ClassRules {
    /// The names of the touch flags, in output order.
    pub fn flags(&self) -> impl Iterator<Item = &str> {
        self.flags.iter().map(String::as_str)
    }

    fn marks(&self, file: &ChangedFile) -> Marks {
        Marks {
            path: self.globs.mask(&Candidate::new(&file.path)),
            prev: file
                .previous_path
                .as_deref()
                .map(|p| self.globs.mask(&Candidate::new(p))),
        }
    }

    fn all_marks(&self, files: &[ChangedFile]) -> Vec<Marks> {
        files.iter().map(|f| self.marks(f)).collect()
    }

    fn flag_bit(&self, flag: &str) -> Option<u64> {
        self.flags.iter().position(|f| f == flag).map(flag_bit)
    }
}

/// Whether a file is generated: its path matches a generated glob, and, for a rename, the path
/// it came from does too (moving a hand-written file into a generated place is a hand edit).
pub fn is_generated(file: &ChangedFile, rules: &ClassRules) -> bool {
    rules.marks(file).generated()
}

/// The changed-line count, with what was left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCount {
    /// The lines the size rules read.
    pub counted: u64,
    /// Generated lines left out of `counted` (zero when they were counted in full).
    pub left_out: u64,
}

/// Counts lines given each file's marks; `None` when any file has no counts.
fn count_lines(files: &[ChangedFile], marks: &[Marks], large_lines: u64) -> Option<LineCount> {
    let (mut hand, mut machine) = (0u64, 0u64);
    for (file, m) in files.iter().zip(marks) {
        let n = file.lines()?;
        if m.generated() {
            machine = machine.saturating_add(n);
        } else {
            hand = hand.saturating_add(n);
        }
    }
    // Generated lines that alone pass the threshold were not generated by a tool run alone.
    Some(if machine > large_lines {
        LineCount {
            counted: hand.saturating_add(machine),
            left_out: 0,
        }
    } else {
        LineCount {
            counted: hand,
            left_out: machine,
        }
    })
}

/// The seed's changedLineCount: additions plus deletions without generated files, or `None`
/// when any file's counts are unknown.
pub fn changed_line_count(files: &[ChangedFile], rules: &ClassRules) -> Option<u64> {
    count_lines(files, &rules.all_marks(files), rules.table.large_lines).map(|c| c.counted)
}

/// Whether a count is large: past the threshold. An unread count is not large; it is unread.
pub fn is_large(count: Option<u64>, rules: &ClassRules) -> bool {
    count.is_some_and(|n| n > rules.table.large_lines)
}

fn touch_lists(
    files: &[ChangedFile],
    marks: &[Marks],
    rules: &ClassRules,
) -> BTreeMap<String, Vec<String>> {
    let mut lists: Vec<Vec<String>> = vec![Vec::new(); rules.flags.len()];
    for (file, m) in files.iter().zip(marks) {
        let touched = m.touches();
        if touched == 0 {
            continue;
        }
        for (i, list) in lists.iter_mut().enumerate() {
            if let Some(p) = m.setter(file, flag_bit(i)) {
                list.push(p.to_string());
            }
        }
    }
    rules.flags.iter().cloned().zip(lists).collect()
}

/// Each touch flag with the paths that set it (the changed path, or the rename source when
/// only that matched). Every flag is present; an empty list means untouched.
pub fn touch_paths(files: &[ChangedFile], rules: &ClassRules) -> BTreeMap<String, Vec<String>> {
    touch_lists(files, &rules.all_marks(files), rules)
}

/// The seed's touchesDependency: a changed path, or the path it was renamed from, matches the
/// `dependency` touch globs.
pub fn touches_dependency(files: &[ChangedFile], rules: &ClassRules) -> bool {
    let Some(bit) = rules.flag_bit("dependency") else {
        return false;
    };
    files.iter().any(|f| rules.marks(f).touches() & bit != 0)
}

/// The advisory security-slice flag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecuritySlice {
    /// The counted lines.
    pub lines: u64,
    /// The threshold they passed.
    pub cap: u64,
    /// The non-generated security or authority paths touched (empty when the kind alone set it).
    pub guard_paths: Vec<String>,
}

/// The seed's securitySliceFlag, given each file's marks.
fn slice_flag(
    kind: Option<&str>,
    files: &[ChangedFile],
    marks: &[Marks],
    count: Option<LineCount>,
    rules: &ClassRules,
) -> Option<SecuritySlice> {
    let lines = count?.counted;
    let cap = rules.table.security_slice_lines;
    if lines <= cap {
        return None;
    }
    let guard_paths: Vec<String> = files
        .iter()
        .zip(marks)
        .filter(|(_, m)| !m.generated())
        .filter_map(|(f, m)| m.setter(f, rules.guard).map(str::to_string))
        .collect();
    let security_kind = kind.is_some_and(|k| rules.table.security_kinds.iter().any(|s| s == k));
    (security_kind || !guard_paths.is_empty()).then_some(SecuritySlice {
        lines,
        cap,
        guard_paths,
    })
}

/// The seed's securitySliceFlag: set when the counted lines pass the cap and the PR is of a
/// security kind or touches a non-generated security or authority path. Never set on an unread
/// count. Advisory: large security slices rarely converge within three review rounds.
pub fn security_slice_flag(
    kind: Option<&str>,
    files: &[ChangedFile],
    rules: &ClassRules,
) -> Option<SecuritySlice> {
    let marks = rules.all_marks(files);
    let count = count_lines(files, &marks, rules.table.large_lines);
    slice_flag(kind, files, &marks, count, rules)
}

/// The two classes of the seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    G10,
    Standard,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::G10 => "g10",
            Class::Standard => "standard",
        }
    }
}

/// The `pr-class` record: the class, the size, the touch flags and the security-slice flag.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrClass {
    #[serde(rename = "type")]
    pub record_type: String,
    pub repo: Option<String>,
    pub pr: Option<u64>,
    pub head: Option<String>,
    pub base: Option<String>,
    pub kind: Option<String>,
    pub class: Class,
    /// Why the class is g10 (`unread`, `large`, `dependency` or another strict flag,
    /// `g10-hold`); empty for standard.
    pub reasons: Vec<String>,
    /// Counted lines; null when unread.
    pub changed_lines: Option<u64>,
    /// Generated lines left out of the count; null when unread.
    pub generated_lines: Option<u64>,
    pub large_lines: u64,
    pub large: bool,
    /// Files whose line counts are unknown (binary files in numstat).
    pub unread_paths: Vec<String>,
    pub file_count: usize,
    pub dependency_touch: bool,
    pub g10_hold: bool,
    pub touches: BTreeMap<String, Vec<String>>,
    pub security_slice: Option<SecuritySlice>,
}

impl PrClass {
    /// Whether a touch flag is set.
    pub fn touched(&self, flag: &str) -> bool {
        self.touches.get(flag).is_some_and(|p| !p.is_empty())
    }
}

/// The seed's classifyPr: g10 when the size is unread, large, a strict flag (dependency) is
/// touched, or a g10 hold is held; standard otherwise.
pub fn classify_pr(facts: &PrFacts, rules: &ClassRules) -> PrClass {
    let files = &facts.changed_files;
    let marks = rules.all_marks(files);
    let count = count_lines(files, &marks, rules.table.large_lines);
    let changed_lines = count.map(|c| c.counted);
    let large = is_large(changed_lines, rules);
    let touches = touch_lists(files, &marks, rules);
    let mut reasons = Vec::new();
    if count.is_none() {
        reasons.push("unread".to_string());
    }
    if large {
        reasons.push("large".to_string());
    }
    for (i, flag) in rules.flags.iter().enumerate() {
        if rules.strict & flag_bit(i) != 0 && touches.get(flag).is_some_and(|p| !p.is_empty()) {
            reasons.push(flag.clone());
        }
    }
    if facts.g10_hold {
        reasons.push("g10-hold".to_string());
    }
    let security_slice = slice_flag(facts.kind.as_deref(), files, &marks, count, rules);
    PrClass {
        record_type: "pr-class".into(),
        repo: facts.repo.clone(),
        pr: facts.pr,
        head: facts.head.clone(),
        base: facts.base.clone(),
        kind: facts.kind.clone(),
        class: if reasons.is_empty() {
            Class::Standard
        } else {
            Class::G10
        },
        reasons,
        changed_lines,
        generated_lines: count.map(|c| c.left_out),
        large_lines: rules.table.large_lines,
        large,
        unread_paths: files
            .iter()
            .filter(|f| f.lines().is_none())
            .map(|f| f.path.clone())
            .collect(),
        file_count: files.len(),
        dependency_touch: touches.get("dependency").is_some_and(|p| !p.is_empty()),
        g10_hold: facts.g10_hold,
        touches,
        security_slice,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> ClassRules {
        ClassRules::default()
    }

    fn f(path: &str, lines: u64) -> ChangedFile {
        ChangedFile::new(path, lines, 0)
    }

    fn unread(path: &str) -> ChangedFile {
        ChangedFile {
            path: path.into(),
            ..ChangedFile::default()
        }
    }

    fn facts(files: Vec<ChangedFile>) -> PrFacts {
        PrFacts {
            repo: Some("acme/app".into()),
            pr: Some(7),
            head: Some("abc123".into()),
            base: Some("def456".into()),
            kind: Some("feature".into()),
            changed_files: files,
            g10_hold: false,
        }
    }

    #[test]
    fn count_is_additions_plus_deletions() {
        let files = [
            ChangedFile::new("src/a.ts", 4, 1),
            ChangedFile::new("src/b.ts", 0, 7),
        ];
        assert_eq!(changed_line_count(&files, &rules()), Some(12));
        assert_eq!(changed_line_count(&[], &rules()), Some(0));
    }

    #[test]
    fn count_leaves_out_each_generated_glob_of_the_seed() {
        for path in [
            "CAPABILITIES.md",
            "site/reference/panel.md",
            "site/reference-sidebar.json",
            "site/guides/capabilities.md",
            ".codewatch/check.json",
            ".codewatch/dead-exports.json",
            ".changeset/brave-cats.md",
            "packages/core/api/core.d.ts",
        ] {
            let files = [f("src/a.ts", 10), f(path, 50)];
            assert_eq!(changed_line_count(&files, &rules()), Some(10), "{path}");
        }
    }

    #[test]
    fn lockfiles_and_snapshots_still_count() {
        let files = [
            f("pnpm-lock.yaml", 300),
            f("src/__snapshots__/a.test.ts.snap", 20),
        ];
        assert_eq!(changed_line_count(&files, &rules()), Some(320));
    }

    #[test]
    fn any_unknown_count_makes_the_count_unread() {
        let files = [f("src/a.ts", 10), unread("logo.png")];
        assert_eq!(changed_line_count(&files, &rules()), None);
        // Even a generated file without counts.
        assert_eq!(
            changed_line_count(&[unread("CAPABILITIES.md")], &rules()),
            None
        );
        let half = ChangedFile {
            additions: Some(3),
            ..unread("a")
        };
        assert_eq!(changed_line_count(&[half], &rules()), None);
    }

    #[test]
    fn a_rename_is_generated_only_when_it_came_from_a_generated_path() {
        let r = rules();
        // Out of a generated place into another: still generated.
        let both = f("packages/b/api/b.d.ts", 50).renamed_from("packages/a/api/a.d.ts");
        assert!(is_generated(&both, &r));
        // Into a generated path from a hand-written one: a hand edit.
        let into = f("packages/b/api/b.d.ts", 50).renamed_from("src/b.d.ts");
        assert!(!is_generated(&into, &r));
        assert_eq!(changed_line_count(&[into], &r), Some(50));
        // Out of a generated path into a hand-written one: not generated either.
        let out = f("src/b.d.ts", 50).renamed_from("packages/b/api/b.d.ts");
        assert!(!is_generated(&out, &r));
        assert_eq!(changed_line_count(&[out], &r), Some(50));
    }

    #[test]
    fn generated_lines_that_alone_pass_the_threshold_count_in_full() {
        let r = rules();
        let at =
            |lines: u64| changed_line_count(&[f("src/a.ts", 5), f("CAPABILITIES.md", lines)], &r);
        assert_eq!(at(400), Some(5));
        assert_eq!(at(401), Some(406));
        // Split over several generated files, the sum is what counts.
        let files = [f("CAPABILITIES.md", 200), f(".changeset/a.md", 201)];
        assert_eq!(changed_line_count(&files, &r), Some(401));
    }

    #[test]
    fn large_is_past_four_hundred() {
        let r = rules();
        for (lines, large) in [(399, false), (400, false), (401, true)] {
            let count = changed_line_count(&[f("src/a.ts", lines)], &r);
            assert_eq!(is_large(count, &r), large, "{lines}");
            let cls = classify_pr(&facts(vec![f("src/a.ts", lines)]), &r);
            assert_eq!(cls.class == Class::G10, large, "{lines}");
        }
        assert!(!is_large(None, &r));
    }

    #[test]
    fn dependency_touch_by_path_or_rename_source() {
        let r = rules();
        for path in [
            "pnpm-lock.yaml",
            "pnpm-workspace.yaml",
            "package.json",
            "packages/x/package.json",
            "Cargo.toml",
            "crates/a/Cargo.toml",
            "go.sum",
            "requirements-dev.txt",
            "Gemfile.lock",
            "app/build.gradle.kts",
            "pom.xml",
        ] {
            assert!(touches_dependency(&[f(path, 1)], &r), "{path}");
        }
        assert!(!touches_dependency(&[f("src/package.ts", 1)], &r));
        assert!(!touches_dependency(&[f("package.json.md", 1)], &r));
        let moved = f("docs/old-package.json.txt", 0).renamed_from("package.json");
        assert!(touches_dependency(&[moved], &r));
    }

    #[test]
    fn a_dependency_touch_is_g10_at_any_size() {
        let cls = classify_pr(&facts(vec![f("package.json", 1)]), &rules());
        assert_eq!(cls.class, Class::G10);
        assert_eq!(cls.reasons, ["dependency"]);
        assert!(cls.dependency_touch);
        assert_eq!(cls.touches["dependency"], ["package.json"]);
    }

    #[test]
    fn classify_reasons() {
        let r = rules();
        let cls = classify_pr(&facts(vec![unread("a.png")]), &r);
        assert_eq!(
            (cls.class, cls.reasons.clone()),
            (Class::G10, vec!["unread".to_string()])
        );
        assert_eq!((cls.changed_lines, cls.generated_lines), (None, None));
        assert_eq!(cls.unread_paths, ["a.png"]);
        let mut held = facts(vec![f("src/a.ts", 3)]);
        held.g10_hold = true;
        assert_eq!(classify_pr(&held, &r).reasons, ["g10-hold"]);
        let cls = classify_pr(&facts(vec![f("src/a.ts", 3), f("CAPABILITIES.md", 9)]), &r);
        assert_eq!(cls.class, Class::Standard);
        assert!(cls.reasons.is_empty());
        assert_eq!((cls.changed_lines, cls.generated_lines), (Some(3), Some(9)));
    }

    #[test]
    fn the_seed_example_touches_policy_only() {
        let cls = classify_pr(
            &facts(vec![ChangedFile::new(".github/workflows/ci.yml", 4, 1)]),
            &rules(),
        );
        assert_eq!(cls.class, Class::Standard);
        assert_eq!(cls.changed_lines, Some(5));
        let set: Vec<&str> = cls
            .touches
            .iter()
            .filter(|(_, p)| !p.is_empty())
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(set, ["policy"]);
        assert_eq!(cls.security_slice, None);
    }

    #[test]
    fn security_slice_needs_more_than_the_cap_and_a_kind_or_guard_path() {
        let r = rules();
        let big = |n| f("src/app.ts", n);
        // Kind security, past the cap.
        for (lines, set) in [(400, false), (401, true)] {
            let flag = security_slice_flag(Some("security"), &[big(lines)], &r);
            assert_eq!(flag.is_some(), set, "{lines}");
        }
        assert_eq!(
            security_slice_flag(Some("security"), &[big(401)], &r),
            Some(SecuritySlice {
                lines: 401,
                cap: 400,
                guard_paths: vec![]
            })
        );
        // Another kind with no guard path: nothing.
        assert_eq!(security_slice_flag(Some("feature"), &[big(500)], &r), None);
        // A security path, or an authority path, sets it on any kind.
        let files = [big(400), f("src/auth/session.ts", 1)];
        let flag = security_slice_flag(Some("feature"), &files, &r).unwrap();
        assert_eq!(flag.guard_paths, ["src/auth/session.ts"]);
        let files = [big(400), f("lib/security/check.rs", 1)];
        assert!(security_slice_flag(None, &files, &r).is_some());
        // Small slices never set it, even of kind security with guard paths.
        let files = [f("src/auth/session.ts", 10)];
        assert_eq!(security_slice_flag(Some("security"), &files, &r), None);
    }

    #[test]
    fn security_slice_ignores_generated_guard_paths_and_unread_counts() {
        let mut table = Rules::default();
        table.generated.push("**/security/generated/**".into());
        let r = table.compile().unwrap();
        let files = [f("src/app.ts", 401), f("lib/security/generated/x.rs", 5)];
        assert_eq!(security_slice_flag(Some("feature"), &files, &r), None);
        let files = [f("src/auth/a.ts", 500), unread("logo.png")];
        assert_eq!(security_slice_flag(Some("security"), &files, &r), None);
    }

    #[test]
    fn rules_files_replace_or_extend() {
        let base = Rules::default();
        let replaced = base
            .clone()
            .apply_file("r.json", r#"{"largeLines": 100, "generated": ["out/**"]}"#)
            .unwrap();
        assert_eq!(replaced.large_lines, 100);
        assert_eq!(replaced.generated, ["out/**"]);
        assert_eq!(replaced.touches, base.touches);
        let one_flag = base
            .clone()
            .apply_file(
                "r.json",
                r#"{"touches": {"dependency": ["deps.edn"], "tests": []}}"#,
            )
            .unwrap();
        assert_eq!(one_flag.touches["dependency"], ["deps.edn"]);
        assert!(one_flag.touches["tests"].is_empty());
        assert_eq!(one_flag.touches["policy"], base.touches["policy"]);
        let extended = base
            .clone()
            .apply_file(
                "r.json",
                r#"{"extend": true, "generated": ["out/**"], "touches": {"dependency": ["deps.edn"], "infra": ["terraform/**"]}}"#,
            )
            .unwrap();
        assert_eq!(extended.generated.len(), base.generated.len() + 1);
        assert!(extended.touches["dependency"].contains(&"deps.edn".to_string()));
        assert!(extended.touches["dependency"].contains(&"**/package.json".to_string()));
        assert_eq!(extended.touches["infra"], ["terraform/**"]);
        let err = base
            .clone()
            .apply_file("r.json", "{\n\"largeLine\": 3}")
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("r.json: line 2: unknown field `largeLine`"),
            "{err}"
        );
        let bad = base
            .apply_file("r.json", r#"{"strict": ["deps"]}"#)
            .unwrap();
        assert!(bad.compile().is_err());
    }

    #[test]
    fn printed_rules_read_back_as_the_same_table() {
        let text = serde_json::to_string(&Rules::default()).unwrap();
        let back = Rules {
            large_lines: 1,
            ..Rules::default()
        }
        .apply_file("r", &text)
        .unwrap();
        assert_eq!(back, Rules::default());
    }
}
