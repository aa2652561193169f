//! The classifier's default table, as data: the thresholds and the globs of each list.
//! `pr-classify --print-rules` prints it and the man page lists it; a `--rules FILE` replaces
//! or extends any part of it.

use std::collections::BTreeMap;

use super::ClassTable;

/// A PR is large past this many counted lines (the seed's largeLines).
pub const LARGE_LINES: u64 = 400;

/// The security-slice flag needs more counted lines than this (the seed's SECURITY_SLICE_LINES).
pub const SECURITY_SLICE_LINES: u64 = 400;

/// PR kinds that count as a security slice whatever they touch.
const SECURITY_KINDS: &[&str] = &["security"];

/// Touch flags that make a PR g10 at any size.
const STRICT: &[&str] = &["dependency"];

/// Touch flags whose non-generated paths make a large PR a security slice.
const GUARD: &[&str] = &["security", "authority"];

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

impl Default for ClassTable {
    fn default() -> ClassTable {
        let mut touches = BTreeMap::new();
        touches.insert("dependency".into(), strings(DEPENDENCY));
        touches.insert("authority".into(), strings(AUTHORITY));
        touches.insert("policy".into(), strings(POLICY));
        touches.insert("security".into(), strings(SECURITY));
        touches.insert("tests".into(), strings(TESTS));
        ClassTable {
            large_lines: LARGE_LINES,
            security_slice_lines: SECURITY_SLICE_LINES,
            security_kinds: strings(SECURITY_KINDS),
            generated: strings(GENERATED),
            touches,
            strict: strings(STRICT),
            guard: strings(GUARD),
        }
    }
}

/// A preset by name: `seed` is the defaults with the seed's exact dependency and generated
/// lists (3 and 8 globs), for a result comparable with the seed's own classifier.
pub fn preset(name: &str) -> Option<ClassTable> {
    match name {
        "seed" => {
            let mut r = ClassTable {
                generated: strings(SEED_GENERATED),
                ..ClassTable::default()
            };
            r.touches
                .insert("dependency".into(), strings(SEED_DEPENDENCY));
            Some(r)
        }
        _ => None,
    }
}

/// The seed's dependency list: "pnpm-lock.yaml, pnpm-workspace.yaml, any package.json".
const SEED_DEPENDENCY: &[&str] = &["pnpm-lock.yaml", "pnpm-workspace.yaml", "**/package.json"];

/// The seed's generated list, one project's tool output among them (its capabilities pages,
/// reference site and code-watch reports): `--rules seed` alone carries those.
const SEED_GENERATED: &[&str] = &[
    "CAPABILITIES.md",
    "site/reference/**",
    "site/reference-sidebar.json",
    "site/guides/capabilities.md",
    ".codewatch/check.json",
    ".codewatch/dead-exports.json",
    ".changeset/*.md",
    "packages/*/api/*.d.ts",
];

/// Output of tools, not of hands, in any repository: the seed's two lists that are common
/// tools' (changesets, API reports), then others. Lockfiles and snapshots are deliberately
/// absent, since a change to them is a change to review.
const GENERATED: &[&str] = &[
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
