//! Each tool's long description, its `--help` and its man page's DESCRIPTION: written once,
//! at 100 columns (a `\` continues a line at a space, so the text is unchanged).

use std::fmt::Write as _;

use crate::rules::classify::ClassTable;
use crate::rules::plan::PlanPolicy;
use crate::tools::docs::ToolDoc;

/// panel-merge's.
pub const MERGE: &str = "Merge the findings of several reviews that name the same problem.

Reads review records and writes one reviewer record per review, one finding record per problem \
    (the strongest severity in its group, every raiser in raisedBy, the original ids in sources) \
    and a closing merge record: the stream panel-vote reads.

By default the findings are grouped in code. Two findings of different reviewers are one problem \
    when they point at the same place (the same quoted claim of three words or more, or the same \
    file with lines at most 3 apart) and are worded alike (word overlap of at least 0.4, leaving \
    out the quoted claim). When only one of the two signals says so, they stay apart and each is \
    marked possibleDuplicateOf the other. Code keeps the evidence that points at the work and the \
    fix that says most.

With --seat, one seat groups them instead: the seat the command line names, never one a record \
    names (the seed's merging seat is the first reviewer's: give the first --seat panel-judge was \
    given). Its answer must place each finding in exactly one group; a seat that fails or answers \
    badly, after being asked once more, leaves the findings unmerged, and the merge record says \
    mergeFailed.";

/// panel-vote's.
pub const VOTE: &str = "Cross-review merged findings, apply the vote rules, and let a judge act \
    on or skip each one.

Reads panel-merge's stream. Each reviewer with a readable review is asked once, in a fresh call, \
    on its own seat, about the merged findings it did not raise, and answers each agree, disagree \
    or better fix with a one-line reason. The votes are applied in code, counting only those who \
    voted on a finding: when most disagree, the finding is dropped only if the disagreeing \
    outnumber those who raised it, agreed or offered a better fix, else it is disputed; exactly \
    half disagreeing makes it disputed; when most prefer a better fix, the first one offered \
    replaces the finding's fix. Votes never drop a block: it stays, disputed. A finding shown to a \
    voter whose vote is missing (its seat failed, its reply was unreadable, or its reply left that \
    finding out) stays, disputed, whatever the other votes say; a reply that leaves some findings \
    out still counts for the findings it voted on.

The records are data: they never choose a program to run. The voters' seats come from the command \
    line, one --seat for each seat the reviewers sat on (the --seat options panel-judge was \
    given), and the judge's from --judge. A reviewer record whose seat is not one of them (a \
    stream from a CI artifact or another machine, say) is an input error naming its line, and \
    nothing is launched.

The panel passes when --agree reviewers passed the work, or when the votes dropped every finding \
    it had: nothing is left to send back, and that holds when some reviews are missing too, since \
    a review that failed sends nothing back (the panel record names them in noReviewFrom). Below \
    the threshold with a finding left, it has no decision when the missing reviews could have \
    reached it. A judge then acts on or skips each finding left, seeing who raised it and how the \
    others voted; the route is again when it acts on any. With no judge, a block goes straight back.

With --stop-when-decided, a voter still out (asked and not yet answered, or not yet launched) is \
    ended, its whole group as at the deadline, or never launched, once the votes in fix the fate \
    of every finding it was shown whatever it would vote: agree, disagree or a better fix of its \
    own. Its vote records say cancelled, with a cause naming the fates the votes in fixed, and it \
    is no missing vote: it disputes nothing. Never the default: a split's reasons are the finding, \
    and a voter left out gives none. With --cascade (which implies it), voters are also asked only \
    as they are needed: at first, for each finding, as many of the voters shown it, in reviewer \
    order, as could fix its fate (two agreeing of three voters can keep a finding), then more only \
    while a fate is open; a voter never asked is recorded cancelled too. Wall time can grow while \
    cost falls. A voter never asked cannot fail: where its seat would have failed, asking every \
    voter would have left the finding disputed (a missing vote), while the cascade keeps the fate \
    the votes in fixed (with --stop-when-decided alone that depends on which voter answers first). \
    While more than 12 voters are still out on a finding its fate is taken as open (every way they \
    could vote is not searched), so stopping and the cascade save only once the votes in leave 12 \
    or fewer out. A vote record that says cancelled though its vote could have changed a finding's \
    fate (a forged or edited stream, to panel-vote apply) counts as missing, and the panel has no \
    decision.

A recorded judge, --judge replay:FILE, reads FILE as a JSON array of answer objects, one per round \
    (--round picks one; later rounds repeat the last), or as one answer object for every round. An \
    answer holds finding-1, finding-2, … for the findings left in synthesis order, each \
    {\"decision\": \"act\" or \"skip\", \"reason\": \"…\"}; other keys are let be.

Writes vote records, one synthesis entry per finding, a panel record, the judge's decision records \
    and a route record.";

/// What panel-judge's long help says of `--contract pr` and the verdict block.
pub const JUDGE_PR: &str = "PULL REQUESTS (--contract pr --plan FILE --repo DIR): one reviewer \
    per plan member, all at once, each in its own detached git worktree of the head (made under \
    the temporary folder and removed afterwards; git writes every symbolic link there as a plain \
    file holding its target's text, so no path in it leads outside it, and runs no hook; the brief \
    names each changed link and its target) and with its harness's reviewer mode, whose own walls \
    keep it to the checkout: claude reads through its file tools (Read; Grep and Glob too where \
    its build offers them) in dontAsk mode with --restricted, which refuse any path outside the \
    checkout, and can neither write nor run a command; codex keeps its shell, under a permission \
    profile that reads only the checkout, the repository's git data, codex's installation and the \
    system's minimal set, writes nothing and has no network (under --sandbox, whose Landlock walls \
    codex's own cannot nest in, codex runs unsandboxed inside ours, which read-only the checkout). \
    Each member ends in one pr-verdict record, on standard output and in the run folder.

The verdict block: the reviewer's last message carries one key per line. Verdict: MERGE or \
    Verdict: FIX_FIRST. PR: OWNER/REPO#N (OWNER/REPO when the plan has no PR number; the \
    repository's case is ignored). Head: the head commit, whole or its first 8 or more hex digits. \
    A MERGE adds CI-policy: unchanged, or CI-policy: weakened KEY, … (required-checks, triggers, \
    permissions, pinning, thresholds, secrets). A FIX_FIRST adds Defect class: (a few words) and \
    Findings: with one `- path:LINE — what is wrong` line per finding. An optional Follow-ups: \
    heading, before or after the verdict lines, holds `- title | done_when | severity` lines \
    (severity low, medium or high; at most 5), or reads Follow-ups: none; a faulty block is \
    dropped whole with one warning (multiple_blocks, bad_item, bad_severity, too_many, too_long, \
    placeholder) and never changes the verdict. Lines inside code fences or HTML comments are not \
    read.

Acceptance: a block that is missing, repeats a key, gives another verdict, lacks PR: or Head:, or \
    names another PR or head is refused; the reviewer is asked once to correct it, and a second \
    refusal makes the member malformed. The correction (the reason and the rule) resumes the \
    reviewer's own session where its harness row can (claude --resume, codex exec resume; the \
    first call then keeps its session in its private HOME, which is removed when the member is \
    done), with every lockdown flag of the first call; elsewhere, when the event stream gave no \
    session id, or when the resume fails, it is a fresh call with the brief and the correction. \
    The record's correction says which: resumed or fresh. A verdict from a reviewer whose event \
    stream shows no investigative call (a file tool that reads, such as Read, or a shell command \
    that reads files) is depth-floor. A usage-limit notice is the harness's own (usage-limit, with \
    resetsAt when the notice gives one) only when the harness also exited non-zero; the same words \
    from the reviewer are malformed. A reviewer that changed its checkout (a file, or HEAD) is \
    checkout-changed. A model the harness refuses in its own words (not available, not allowed, no \
    access to it, no quota for it: its row's errors rule model-refused), exiting non-zero, is \
    tried once more at the member's sonnet profile when the plan's sonnetFor maps its profile (at \
    the plan's sonnetSeats seat), and the record is marked degraded: \"An opus spawn the dispatch \
    refuses is tried once at its sonnet profile and the member is degraded; a second refusal is a \
    none with SPAWN_REFUSED_REASON\" (seed 002); a second refusal, or one at a profile sonnetFor \
    does not map, is model-refused with reason spawn-refused. A reviewer silent past --timeout is \
    replaced once by a fresh reviewer named MEMBER-r2, and the member is timeout when that one is \
    silent too. A later round: --earlier FILE gives the pr-verdict records of this PR's earlier \
    heads (oldest first); their FIX_FIRSTs are shown to every reviewer between EARLIER-FINDINGS \
    and END-EARLIER-FINDINGS lines (cut from the oldest end at 8000 characters, then stripped of \
    verdict-block lines and of both markers in any case), and the reviewer answers with an Earlier \
    findings: checklist of - fixed: and - not fixed: lines, kept in its record as earlierFindings. \
    --fix-proof gives what the fix-proof check said: a verdict, or a fix-proof/v1 head=HEX \
    verdict=V [added=N] [fail-on-base=N] [flags=a,b] line of which only the verdict, counts and \
    flags are read (a line that does not parse or names another head is ignored, and the proof is \
    unread); the tests brief shows them, and error, untrusted or unread asks every reviewer for \
    FIX_FIRST unless it names an added test that fails on the base. With --out DIR, a member whose \
    record there answered (ok, malformed, depth-floor, checkout-changed) for the same repository, \
    PR, head and brief hash is not launched again and its record is written again; the others run \
    again. A reviewer whose stream passes --max-output is stopped and the member is output-limit; \
    its stream is read event by event as it arrives, so a verdict in the last event of a \
    transcript of any size within the budget counts, with every tool call it shows.

Stopping early (--stop-when-decided): once a member's accepted verdict is a blocking FIX_FIRST \
    (one that counts, of a member that blocks, as panel-tally --pr reads it; the tests member too \
    under a weak --fix-proof), which fails the panel whatever the others say, the members still \
    running are ended (their whole process group, as at the deadline) and none is launched. Each \
    is a pr-verdict record with status cancelled, verdict null and the reason \"the panel was \
    decided without it: MEMBER found a blocking FIX_FIRST\"; panel-tally --pr counts it as no \
    verdict, never a decision, and a stream with a cancelled member but no blocking FIX_FIRST is \
    no-verdict, exit 3, with a CANCELLED WITHOUT CAUSE line naming it. Findings matter in a PR \
    panel: stopping costs every finding the members left out would have raised, so the fix may \
    meet them in a later round. Never the default. --agree and --cascade are refused: a PR panel \
    is decided by its plan's blocking members, not by a count.";

/// What pr-classify is and does, before its defaults.
const PR_CLASSIFY_INTRO: &str = "Size a pull request and plan its review panel. pr-classify reads \
    what is known about one pull request and writes one pr-class record (JSON): the changed-line \
    count without generated files, whether it is large, the touch flags with the paths that set \
    each, the advisory security-slice flag, the class, g10 or standard, and the changed paths \
    that are symbolic links (links; known from git diff --raw or a file's mode in PR facts, never \
    from gh). With --plan a plan record follows: the reviewers to run, each with its shape, \
    profile, seat (HARNESS:MODEL for panel-judge), whether it blocks, the panel's spend estimate, \
    and the links again. It runs no model and reads no network.\n\nInput: PR facts as JSON, gh pr \
    view --json output as it is, or git diff --numstat output (renames in both of git's \
    notations; a binary file, - - in numstat, is a file of no lines as GitHub counts it, listed \
    in binaryPaths; git diff --raw --numstat adds each file's mode; git log --numstat is read \
    too). A leading { is JSON; anything else numstat.\n\nRules: the count is additions plus \
    deletions with generated files left out, unread when any file has no counts. A rename is \
    generated only when it came from a generated path too. Generated lines that alone pass \
    largeLines count in full, as a hand edit. A touch flag is set by a changed path, or the path \
    it was renamed from, matching its globs. The class is g10 when the count is unread, large, a \
    strict flag is touched, or a g10 hold is held. g10 is the strict class: under the default \
    policy its panel has an opus correctness member and an adversary; panel-tally --pr passes its \
    g10 bar (satisfiesG10) only on a MERGE with no degraded member, the correctness member at an \
    opus profile and the adversary's MERGE; standard is every other PR. The security slice is set \
    past securitySliceLines counted lines when the kind is a security kind or a non-generated \
    guard path is touched. Globs match the whole path; * and ? stay inside one segment, a ** \
    segment spans any number of them, and a leading ./ is dropped. ? matches one byte, and [abc], \
    [!abc], {a,b} and \\ escapes are as in ripgrep's globs.\n\n";

/// pr-classify's: its rules and its default table and policy, as they are.
pub fn pr_classify() -> String {
    let r = ClassTable::default();
    let mut s = String::from(PR_CLASSIFY_INTRO);
    let _ = writeln!(
        s,
        "DEFAULT RULES (--print-rules prints them as JSON. In a --rules FILE each key given, and \
         each touch flag, replaces the default's; with \"extend\": true it adds to it.)\n"
    );
    let _ = writeln!(
        s,
        "largeLines {}; securitySliceLines {}; securityKinds: {}; strict: {}; guard: {}.\n",
        r.large_lines,
        r.security_slice_lines,
        list(&r.security_kinds),
        list(&r.strict),
        list(&r.guard)
    );
    let _ = writeln!(s, "generated: {}.\n", list(&r.generated));
    for (flag, globs) in &r.touches {
        let _ = writeln!(s, "touches {flag}: {}.\n", list(globs));
    }
    default_policy(&mut s);
    s
}

/// pr-classify's default policy, in words.
fn default_policy(s: &mut String) {
    let p = PlanPolicy::default();
    let _ = writeln!(
        s,
        "DEFAULT POLICY (--print-policy prints it. In a --policy FILE each key given replaces the \
         default's; with \"extend\": true maps are merged and panel rows follow the defaults.)\n"
    );
    let roles: Vec<String> = p
        .roles
        .iter()
        .map(|(c, prof)| format!("{} at {prof}", c.as_str()))
        .collect();
    let _ = writeln!(s, "correctness always, blocking: {}.\n", list(&roles));
    for row in &p.panel {
        let mut when: Vec<String> = row
            .classes
            .iter()
            .map(|c| format!("class {}", c.as_str()))
            .collect();
        if !row.touches.is_empty() {
            when.push(format!("touches {}", row.touches.join(" or ")));
        }
        let when = if when.is_empty() {
            "always".to_string()
        } else {
            when.join(" or ")
        };
        let _ = writeln!(
            s,
            "{} at {}, {}: {when}.\n",
            row.shape,
            row.profile,
            if row.blocking { "blocking" } else { "advisory" }
        );
    }
    let pairs = |m: &std::collections::BTreeMap<String, String>| {
        m.iter()
            .map(|(a, b)| format!("{a}={b}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let points: Vec<String> = p.points.iter().map(|(a, b)| format!("{a}={b}")).collect();
    let _ = write!(
        s,
        "maxMembers {}; maxOpus {}; sonnetFor: {}; seats: {}; points: {}.",
        p.max_members,
        p.max_opus,
        pairs(&p.sonnet_for),
        pairs(&p.seats),
        list(&points)
    );
}

fn list(items: &[String]) -> String {
    items.join(", ")
}

/// panel-merge's exit status and examples.
pub const MERGE_DOC: ToolDoc = ToolDoc {
    exit_status: &[
        (
            "0",
            "Done, including when the merging seat failed: the findings then go on unmerged and \
                the merge record says mergeFailed.",
        ),
        (
            "2",
            "Usage or input error: one line on standard error names the file and line. Also when \
                the run was done but its run folder could not keep everything (a full disk): \
                standard output is whole, and the last line on standard error names the first file \
                not kept.",
        ),
    ],
    examples: &[
        (
            "Review a page with three seats, merge the findings in code and vote on them",
            "panel-judge --contract review --seat claude:sonnet --seat codex:gpt-5 --seat \
                opencode:google/gemini-2.5-pro page.md | panel-merge | panel-vote --candidate \
                page.md",
        ),
        (
            "Let the first reviewer's seat group the findings",
            "panel-merge --seat claude:sonnet reviews.jsonl > merged.jsonl",
        ),
        (
            "List the merged findings and who raised each",
            "panel-merge reviews.jsonl | jq -r 'select(.type == \"finding\") | \"\\(.id) \
                \\(.raisedBy | join(\",\")): \\(.evidence)\"'",
        ),
    ],
};

/// panel-vote's exit status and examples.
pub const VOTE_DOC: ToolDoc = ToolDoc {
    exit_status: &[
        (
            "0",
            "Pass: the judge skips every finding left, or with no judge the panel passed and no \
                block is left.",
        ),
        (
            "1",
            "Again: findings go back to the writer (the judge acts on one, the panel failed, or a \
                block is left with no judge).",
        ),
        (
            "2",
            "Usage or input error: one line on standard error names the file and line. Also when \
                the run was done but its run folder could not keep everything (a full disk): \
                standard output is whole, and the last line on standard error names the first file \
                not kept (a decision, 1 or 3, keeps its status).",
        ),
        (
            "3",
            "No decision: the judge sent no readable decisions, missing reviews kept the panel \
                from its threshold with a finding left, or a voter recorded as left out \
                (cancelled) could have changed a finding's fate.",
        ),
    ],
    examples: &[
        (
            "The whole synthesised review: review, merge, vote, judge, report",
            "seats=(--seat claude:sonnet --seat codex:gpt-5 --seat \
                opencode:google/gemini-2.5-pro); panel-judge --contract review \"${seats[@]}\" \
                page.md | panel-merge | panel-vote \"${seats[@]}\" --candidate page.md --judge \
                claude:opus | panel-tally",
        ),
        (
            "Pass when two of three reviewers pass, with the brief shown to the voters",
            "panel-merge reviews.jsonl | panel-vote --seat claude:sonnet --seat codex:gpt-5 --seat \
                opencode:google/gemini-2.5-pro --candidate page.md --brief brief.md --agree 2",
        ),
        (
            "Stop asking voters once the votes in fix every finding's fate",
            "panel-merge reviews.jsonl | panel-vote --seat claude:sonnet --seat codex:gpt-5 --seat \
                opencode:google/gemini-2.5-pro --candidate page.md --stop-when-decided | \
                panel-tally",
        ),
        (
            "Apply votes already collected, with recorded judge decisions, launching nothing",
            "cat merged.jsonl votes.jsonl | panel-vote apply --judge replay:judge.json",
        ),
        (
            "Show why each finding was kept, disputed or dropped",
            "panel-vote apply merged.jsonl votes.jsonl | jq -r 'select(.type == \"synthesis\") | \
                \"\\(.finding.id) \\(.result): \\(.why)\"'",
        ),
    ],
};

/// panel-judge's exit status and examples.
pub const JUDGE_DOC: ToolDoc = ToolDoc {
    exit_status: &[
        (
            "0",
            "Every judge ran and has a record (a verdict or an abstention); the records are on \
                standard output. With --list-harnesses or --doctor: the table was printed, \
                harnesses missing or not.",
        ),
        (
            "2",
            "Usage or input error, a harness not installed, correlated judges, or a prompt too \
                large for its harness: nothing was launched. Also when the judges ran but the run \
                folder could not keep everything (a full disk): the records on standard output are \
                whole, and the last line on standard error names the first file not kept.",
        ),
        (
            "130",
            "Stopped by SIGINT: every judge's process group was killed, the finished records \
                written, the rest recorded as interrupted.",
        ),
        ("143", "Stopped by SIGTERM, likewise."),
    ],
    examples: &[
        (
            "Three lenses on one Claude seat, counted",
            "panel-judge --seat claude:haiku answer.md | panel-tally",
        ),
        (
            "One lens across three model families",
            "panel-judge --lens 'correctness=Does it do what it claims?' --seat claude:haiku \
                --seat codex:gpt-5.6-luna --seat exec:'llm -m gemini-2.5-flash' answer.md",
        ),
        (
            "The commands, for pasting into a script",
            "panel-judge --dry-run --seat codex answer.md",
        ),
        (
            "Offline, with recorded answers",
            "panel-judge --seat replay:examples/answers.json examples/answer.md | panel-tally",
        ),
        (
            "Review a pull request with its planned panel",
            "gh pr view 7 --json number,headRefOid,baseRefOid,files,changedFiles,url | pr-classify \
                --gh --plan > plan.json; panel-judge --contract pr --plan plan.json --repo . > \
                verdicts.jsonl",
        ),
        (
            "Which of two answers to a question is better, each judge shown both orders",
            "panel-judge --contract pairwise --brief question.md --seat claude:haiku --seat \
                codex:gpt-5.6-luna a.md b.md | panel-tally",
        ),
        (
            "What this machine has: each harness's program, version and login, and the walls",
            "panel-judge --doctor",
        ),
        (
            "Copy a harness row to change it",
            "panel-judge --list-harnesses --json | jq '.[] | select(.name == \"claude\")'",
        ),
    ],
};

/// pr-classify's exit status and examples.
pub const PR_CLASSIFY_DOC: ToolDoc = ToolDoc {
    exit_status: &[
        ("0", "Done; with --is, the PR is what was asked."),
        ("1", "With --is, the PR is not what was asked."),
        (
            "2",
            "Usage or input error: one line on standard error names the file and line.",
        ),
    ],
    examples: &[
        (
            "Classify a pull request and plan its panel from gh",
            "gh pr view 7 --json number,headRefOid,baseRefOid,files,changedFiles,url | pr-classify \
                --plan",
        ),
        (
            "The same for a local branch, from git",
            "git diff --raw --numstat -M main...HEAD | pr-classify --numstat --repo acme/app \
                --head \"$(git rev-parse HEAD)\" --plan",
        ),
        ("Classify PR facts kept as JSON", "pr-classify facts.json"),
        (
            "Branch in a script on the class",
            "if gh pr view 7 --json number,files | pr-classify --is g10; then echo 'g10 review'; \
                fi",
        ),
        (
            "A summary for people, planned with no opus headroom",
            "gh pr view 7 --json number,headRefOid,baseRefOid,files,changedFiles,url | pr-classify \
                --plan --no-opus --text",
        ),
        (
            "Add a glob to the dependency rules and check the table",
            "echo '{\"extend\": true, \"touches\": {\"dependency\": [\"**/deps.edn\"]}}' > \
                rules.json; pr-classify --rules rules.json --print-rules",
        ),
    ],
};
