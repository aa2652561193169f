//! The review panel planner for a classified pull request: which reviewer shapes run, at which
//! profile and seat, which of them block, and what the panel is expected to spend.

pub mod read;

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use crate::records::class::{Class, PrClass};
use crate::records::plan::{Headroom, Member, PanelPlan};

/// The shape that always runs.
pub const CORRECTNESS: &str = "correctness";

/// One row of the panel table: a shape, added when the class is one of `classes` or the PR
/// touches one of `touches` (a row naming neither always applies).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PanelRow {
    pub shape: String,
    pub profile: String,
    pub blocking: bool,
    #[serde(default)]
    pub classes: Vec<Class>,
    #[serde(default)]
    pub touches: Vec<String>,
    /// The brief the member reads; the shape's own when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brief_id: Option<String>,
}

impl PanelRow {
    /// Why the row applies to this PR, or `None` when it does not.
    fn applies(&self, cls: &PrClass) -> Option<String> {
        if self.classes.is_empty() && self.touches.is_empty() {
            return Some("always".into());
        }
        if self.classes.contains(&cls.class) {
            return Some(format!("class {}", cls.class.as_str()));
        }
        let hit: Vec<&str> = self
            .touches
            .iter()
            .filter(|t| cls.touched(t))
            .map(String::as_str)
            .collect();
        (!hit.is_empty()).then(|| format!("touches {}", hit.join(", ")))
    }
}

/// Everything the planner reads besides the class: `--print-policy` prints it, `--policy FILE`
/// replaces keys of it or with `"extend": true` adds to them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlanPolicy {
    /// The correctness member's profile for each class.
    pub roles: BTreeMap<Class, String>,
    /// Shapes beyond correctness, in priority order.
    pub panel: Vec<PanelRow>,
    pub max_members: usize,
    pub max_opus: usize,
    /// Each opus profile and its sonnet counterpart; a profile is opus only when named here.
    pub sonnet_for: BTreeMap<String, String>,
    /// The `HARNESS:MODEL` seat each profile runs on, for panel-judge.
    pub seats: BTreeMap<String, String>,
    /// Agent-chat points one member at each profile is expected to spend (placeholders until
    /// measured).
    pub points: BTreeMap<String, u64>,
}

impl Default for PlanPolicy {
    fn default() -> PlanPolicy {
        let s = |x: &str| x.to_string();
        PlanPolicy {
            roles: BTreeMap::from([
                (Class::G10, s("reviewer")),
                (Class::Standard, s("bd-reviewer")),
            ]),
            panel: vec![
                PanelRow {
                    shape: s("adversary"),
                    profile: s("reviewer"),
                    blocking: true,
                    classes: vec![Class::G10],
                    touches: vec![s("authority"), s("policy"), s("security")],
                    brief_id: None,
                },
                PanelRow {
                    shape: s("tests"),
                    profile: s("bd-reviewer"),
                    blocking: false,
                    classes: vec![Class::G10],
                    touches: vec![s("tests")],
                    brief_id: None,
                },
            ],
            max_members: 3,
            max_opus: 1,
            sonnet_for: BTreeMap::from([(s("reviewer"), s("bd-reviewer"))]),
            seats: BTreeMap::from([
                (s("reviewer"), s("claude:opus")),
                (s("bd-reviewer"), s("claude:sonnet")),
            ]),
            points: BTreeMap::from([(s("reviewer"), 5), (s("bd-reviewer"), 1)]),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    extend: bool,
    roles: Option<BTreeMap<Class, String>>,
    panel: Option<Vec<PanelRow>>,
    max_members: Option<usize>,
    max_opus: Option<usize>,
    sonnet_for: Option<BTreeMap<String, String>>,
    seats: Option<BTreeMap<String, String>>,
    points: Option<BTreeMap<String, u64>>,
}

fn merge<K: Ord, V>(map: &mut BTreeMap<K, V>, given: Option<BTreeMap<K, V>>, extend: bool) {
    match given {
        Some(more) if extend => map.extend(more),
        Some(new) => *map = new,
        None => {}
    }
}

impl PlanPolicy {
    /// Applies a policy file: each key it names replaces the policy's, or with `"extend": true`
    /// adds to it (maps merged, panel rows appended after the policy's own, numbers replaced).
    pub fn apply_file(mut self, name: &str, text: &str) -> Result<PlanPolicy> {
        let file: PolicyFile = crate::records::strict::from_str(text)
            .map_err(|e| crate::records::facts::json_error(name, &e))?;
        merge(&mut self.roles, file.roles, file.extend);
        merge(&mut self.sonnet_for, file.sonnet_for, file.extend);
        merge(&mut self.seats, file.seats, file.extend);
        merge(&mut self.points, file.points, file.extend);
        match file.panel {
            Some(more) if file.extend => self.panel.extend(more),
            Some(new) => self.panel = new,
            None => {}
        }
        if let Some(n) = file.max_members {
            self.max_members = n;
        }
        if let Some(n) = file.max_opus {
            self.max_opus = n;
        }
        Ok(self)
    }

    /// Checks that every profile the policy can plan has a seat and points, so a plan never
    /// names a member nobody can run.
    pub fn check(&self) -> Result<()> {
        if self.max_members == 0 {
            bail!("policy: maxMembers must be at least 1: the correctness member always runs");
        }
        for class in [Class::G10, Class::Standard] {
            if !self.roles.contains_key(&class) {
                bail!("policy: roles has no profile for class {}", class.as_str());
            }
        }
        let mut profiles: Vec<&String> = self.roles.values().collect();
        for row in &self.panel {
            if row.shape.trim().is_empty() {
                bail!("policy: a panel row without a shape");
            }
            if row.shape == CORRECTNESS {
                bail!(
                    "policy: panel row {CORRECTNESS}: that member always runs, at its roles profile"
                );
            }
            profiles.push(&row.profile);
        }
        profiles.extend(self.sonnet_for.iter().flat_map(|(a, b)| [a, b]));
        for p in profiles {
            match self.seats.get(p) {
                Some(seat) if !seat.trim().is_empty() && !seat.starts_with(':') => {}
                Some(seat) => bail!("policy: profile {p}: seat {seat:?} is not HARNESS:MODEL"),
                None => bail!("policy: profile {p} has no seat"),
            }
            if !self.points.contains_key(p) {
                bail!("policy: profile {p} has no points");
            }
        }
        Ok(())
    }
}

/// memberName (docs/rules.md). Without a PR number (a local diff) that part is left out.
pub fn member_name(repo: &str, pr: Option<u64>, head: &str, shape: &str) -> String {
    let repo = repo.replace('/', "-");
    let head: String = head.chars().take(8).collect();
    match pr {
        Some(n) => format!("rp-{repo}-{n}-{head}-{shape}"),
        None => format!("rp-{repo}-{head}-{shape}"),
    }
}

/// planPanel (docs/rules.md). The correctness member always runs, at the roles profile for the
/// class; panel rows add shapes in order up to `maxMembers`. Opus members past `maxOpus` are
/// planned at their sonnet profile; without opus headroom every opus member is, and is marked
/// degraded.
pub fn plan_panel(cls: &PrClass, policy: &PlanPolicy, headroom: Headroom) -> Result<PanelPlan> {
    // Every missing fact named at once, not one a run.
    let (repo, head) = match (cls.repo.as_deref(), cls.head.as_deref()) {
        (Some(repo), Some(head)) => (repo, head),
        (repo, head) => {
            let mut missing = Vec::new();
            if repo.is_none() {
                missing.push("the repository (--repo OWNER/NAME, or GH_REPO)");
            }
            if head.is_none() {
                missing.push("the head commit (--head SHA)");
            }
            bail!(
                "a plan needs {}; run inside the git repository to take them from its origin and HEAD",
                missing.join(" and ")
            );
        }
    };
    if repo.split('/').filter(|p| !p.is_empty()).count() != 2 || repo.matches('/').count() != 1 {
        bail!("repository {repo:?} is not OWNER/NAME");
    }
    policy.check()?;
    // (shape, brief, profile, blocking, reason), correctness first.
    let mut picked = vec![(
        CORRECTNESS.to_string(),
        CORRECTNESS.to_string(),
        policy.roles[&cls.class].clone(),
        true,
        "always".to_string(),
    )];
    for row in &policy.panel {
        if picked.len() >= policy.max_members {
            break;
        }
        if picked.iter().any(|p| p.0 == row.shape) {
            continue;
        }
        if let Some(reason) = row.applies(cls) {
            let brief = row.brief_id.clone().unwrap_or_else(|| row.shape.clone());
            picked.push((
                row.shape.clone(),
                brief,
                row.profile.clone(),
                row.blocking,
                reason,
            ));
        }
    }
    let mut opus_left = policy.max_opus;
    let mut spend = 0u64;
    let members = picked
        .into_iter()
        .map(|(shape, brief_id, planned, blocking, reason)| {
            let (profile, degraded, downgraded_from) = match policy.sonnet_for.get(&planned) {
                None => (planned, false, None),
                Some(sonnet) if !headroom.opus => (sonnet.clone(), true, Some(planned)),
                Some(_) if opus_left > 0 => {
                    opus_left -= 1;
                    (planned, false, None)
                }
                Some(sonnet) => (sonnet.clone(), false, Some(planned)),
            };
            spend += policy.points[&profile];
            Member {
                name: member_name(repo, cls.pr, head, &shape),
                seat: policy.seats[&profile].clone(),
                shape,
                brief_id,
                profile,
                blocking,
                degraded,
                downgraded_from,
                reason,
            }
        })
        .collect();
    Ok(PanelPlan {
        record_type: "plan".into(),
        repo: repo.to_string(),
        pr: cls.pr,
        head: head.to_string(),
        base: cls.base.clone(),
        kind: cls.kind.clone(),
        class: cls.class,
        headroom,
        members,
        spend_estimate: spend,
        sonnet_for: policy.sonnet_for.clone(),
        sonnet_seats: policy
            .sonnet_for
            .values()
            .map(|p| (p.clone(), policy.seats[p].clone()))
            .collect(),
        links: cls.links.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::facts::{ChangedFile, PrFacts};
    use crate::rules::classify::{ClassRules, classify_pr};

    fn cls(files: Vec<ChangedFile>) -> PrClass {
        let facts = PrFacts {
            repo: Some("acme/app".into()),
            pr: Some(7),
            head: Some("0123456789abcdef".into()),
            base: Some("def456".into()),
            kind: Some("feature".into()),
            changed_files: files,
            g10_hold: false,
            list_incomplete: false,
        };
        classify_pr(&facts, &ClassRules::default())
    }

    fn plan(c: &PrClass, opus: bool) -> PanelPlan {
        plan_panel(c, &PlanPolicy::default(), Headroom { opus }).unwrap()
    }

    fn summary(p: &PanelPlan) -> Vec<(String, String, bool, bool)> {
        p.members
            .iter()
            .map(|m| (m.shape.clone(), m.profile.clone(), m.blocking, m.degraded))
            .collect()
    }

    fn row(shape: &str, profile: &str, blocking: bool) -> (String, String, bool, bool) {
        (shape.into(), profile.into(), blocking, false)
    }

    #[test]
    fn the_seed_example() {
        let c = cls(vec![ChangedFile::new(".github/workflows/ci.yml", 4, 1)]);
        let p = plan(&c, true);
        assert_eq!(
            summary(&p),
            [
                row("correctness", "bd-reviewer", true),
                row("adversary", "reviewer", true)
            ]
        );
        assert_eq!(p.members[0].seat, "claude:sonnet");
        assert_eq!(p.members[1].seat, "claude:opus");
        assert_eq!(p.members[1].name, "rp-acme-app-7-01234567-adversary");
        assert_eq!(p.spend_estimate, 6);
    }

    #[test]
    fn with_no_table_the_plan_is_correctness_alone() {
        let c = cls(vec![ChangedFile::new(".github/workflows/ci.yml", 4, 1)]);
        let policy = PlanPolicy {
            panel: vec![],
            ..PlanPolicy::default()
        };
        let p = plan_panel(&c, &policy, Headroom { opus: true }).unwrap();
        assert_eq!(summary(&p), [row("correctness", "bd-reviewer", true)]);
    }

    #[test]
    fn a_plain_standard_pr_is_correctness_alone() {
        let p = plan(&cls(vec![ChangedFile::new("src/a.ts", 10, 2)]), true);
        assert_eq!(summary(&p), [row("correctness", "bd-reviewer", true)]);
    }

    #[test]
    fn tests_are_advisory() {
        let p = plan(&cls(vec![ChangedFile::new("src/a.test.ts", 10, 2)]), true);
        assert_eq!(
            summary(&p),
            [
                row("correctness", "bd-reviewer", true),
                row("tests", "bd-reviewer", false)
            ]
        );
    }

    #[test]
    fn g10_has_one_opus_member_and_at_most_three() {
        let p = plan(&cls(vec![ChangedFile::new("src/a.ts", 401, 0)]), true);
        assert_eq!(
            summary(&p),
            [
                row("correctness", "reviewer", true),
                row("adversary", "bd-reviewer", true),
                row("tests", "bd-reviewer", false),
            ]
        );
        // The later opus member is planned at its sonnet profile, but not degraded.
        assert_eq!(p.members[1].downgraded_from.as_deref(), Some("reviewer"));
        assert_eq!(p.spend_estimate, 7);
        let mut policy = PlanPolicy::default();
        policy.panel.push(PanelRow {
            shape: "docs".into(),
            profile: "bd-reviewer".into(),
            blocking: false,
            classes: vec![],
            touches: vec![],
            brief_id: None,
        });
        let p = plan_panel(&p_cls_g10(), &policy, Headroom { opus: true }).unwrap();
        assert_eq!(p.members.len(), 3);
    }

    fn p_cls_g10() -> PrClass {
        cls(vec![ChangedFile::new("package.json", 1, 0)])
    }

    #[test]
    fn without_opus_headroom_every_opus_member_is_degraded() {
        let p = plan(&p_cls_g10(), false);
        let degraded: Vec<(&str, &str, bool)> = p
            .members
            .iter()
            .map(|m| (m.shape.as_str(), m.profile.as_str(), m.degraded))
            .collect();
        assert_eq!(
            degraded,
            [
                ("correctness", "bd-reviewer", true),
                ("adversary", "bd-reviewer", true),
                ("tests", "bd-reviewer", false),
            ]
        );
        let c = cls(vec![ChangedFile::new(".github/workflows/ci.yml", 4, 1)]);
        let p = plan(&c, false);
        assert_eq!(
            (p.members[1].profile.as_str(), p.members[1].degraded),
            ("bd-reviewer", true)
        );
        assert!(!p.members[0].degraded);
    }

    #[test]
    fn a_profile_is_opus_only_when_the_sonnet_map_names_it() {
        let policy = PlanPolicy {
            sonnet_for: BTreeMap::new(),
            ..PlanPolicy::default()
        };
        let p = plan_panel(&p_cls_g10(), &policy, Headroom { opus: false }).unwrap();
        assert!(p.members.iter().all(|m| !m.degraded));
        assert_eq!(p.members[1].profile, "reviewer");
    }

    #[test]
    fn names_and_missing_targets() {
        assert_eq!(
            member_name("acme/app", Some(7), "abc", "tests"),
            "rp-acme-app-7-abc-tests"
        );
        assert_eq!(
            member_name("acme/app", None, "0123456789", "tests"),
            "rp-acme-app-01234567-tests"
        );
        let mut c = p_cls_g10();
        c.head = None;
        let err = plan_panel(&c, &PlanPolicy::default(), Headroom { opus: true }).unwrap_err();
        assert!(err.to_string().contains("--head"), "{err}");
        c.repo = None;
        // Issue 25: "Name every missing option in one message".
        let err = plan_panel(&c, &PlanPolicy::default(), Headroom { opus: true }).unwrap_err();
        assert!(
            err.to_string().contains("--repo") && err.to_string().contains("--head"),
            "{err}"
        );
        let mut c = p_cls_g10();
        c.repo = Some("app".into());
        assert!(plan_panel(&c, &PlanPolicy::default(), Headroom { opus: true }).is_err());
    }

    #[test]
    fn policy_files_replace_extend_and_are_checked() {
        let p = PlanPolicy::default()
            .apply_file(
                "p.json",
                r#"{"extend": true, "seats": {"reviewer": "codex:gpt-5"}}"#,
            )
            .unwrap();
        assert_eq!(p.seats["reviewer"], "codex:gpt-5");
        assert_eq!(p.seats["bd-reviewer"], "claude:sonnet");
        let p = PlanPolicy::default()
            .apply_file(
                "p.json",
                r#"{"panel": [{"shape": "x", "profile": "nobody", "blocking": true}]}"#,
            )
            .unwrap();
        assert_eq!(
            p.check().unwrap_err().to_string(),
            "policy: profile nobody has no seat"
        );
        // A panel row is an object, never its values by position.
        let err = PlanPolicy::default()
            .apply_file("p.json", r#"{"panel": [["x", "nobody", true]]}"#)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "p.json: line 1: invalid type: sequence, expected an object"
        );
        let text = serde_json::to_string(&PlanPolicy::default()).unwrap();
        let back = PlanPolicy::default().apply_file("p", &text).unwrap();
        assert_eq!(back, PlanPolicy::default());
        PlanPolicy::default().check().unwrap();
    }
}
