//! `panel-judge --contract pr`: one reviewer per plan member, all at once, each in its own
//! detached checkout of the head; one `pr-verdict` record per member as it ends.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

use crate::contracts::Contract;
use crate::contracts::pr::block::{self, Target};
use crate::contracts::pr::{brief, earlier, fix_proof};
use crate::engine::call::Launcher;
use crate::engine::call::{self, Cancel};
use crate::engine::call::{Done, Job, KeptFolder, Session};
use crate::engine::checkout::{self, Worktree};
use crate::engine::harness::Seat;
use crate::records::input::Input;
use crate::records::plan::{Member, PanelPlan};
use crate::records::pr::{Correction, PrStatus, PrVerdictRecord, VERDICT_TYPE};
use crate::records::{Status, Usage};
use crate::rules::pr::ladder::{self, Ended, Step};
use crate::rules::pr::{accept, aggregate};

/// The largest diff shown in a brief; a larger one is listed by file only.
pub const MAX_BRIEF_DIFF: usize = 60_000;

/// The PR and head a plan reviews.
pub fn target(plan: &PanelPlan) -> Target {
    Target {
        repo: plan.repo.clone(),
        pr: plan.pr,
        head: plan.head.clone(),
    }
}

/// Whether a record kept from an earlier run answers for this member of this plan.
pub fn reusable(rec: &PrVerdictRecord, plan: &PanelPlan, m: &Member) -> bool {
    rec.kind == VERDICT_TYPE
        && rec.member == m.name
        && rec.repo.eq_ignore_ascii_case(&plan.repo)
        && rec.pr == plan.pr
        && rec.head == plan.head
        && rec.brief_hash == brief::brief_hash(&m.brief_id)
        && rec.status.answered()
}

fn kept_record(run: &Path, plan: &PanelPlan, m: &Member) -> Option<PrVerdictRecord> {
    let text = std::fs::read_to_string(run.join(&m.name).join("record.json")).ok()?;
    let rec: PrVerdictRecord = crate::records::strict::from_str(text.trim()).ok()?;
    reusable(&rec, plan, m).then_some(rec)
}

/// The record of a member before it ends.
fn record(plan: &PanelPlan, m: &Member, seat: &Seat, run: &Path) -> PrVerdictRecord {
    PrVerdictRecord {
        kind: VERDICT_TYPE.into(),
        member: m.name.clone(),
        reviewer: m.name.clone(),
        shape: m.shape.clone(),
        brief_id: m.brief_id.clone(),
        brief_hash: brief::brief_hash(&m.brief_id),
        profile: m.profile.clone(),
        seat: m.seat.clone(),
        harness: seat.harness.name.clone(),
        model: seat.model.clone(),
        blocking: m.blocking,
        degraded: m.degraded,
        repo: plan.repo.clone(),
        pr: plan.pr,
        head: plan.head.clone(),
        verdict: None,
        status: PrStatus::Failed,
        reason: None,
        ci_policy: None,
        defect_class: None,
        findings: Vec::new(),
        findings_truncated: false,
        follow_ups: Vec::new(),
        follow_ups_warning: None,
        owner_brief: None,
        earlier_findings: None,
        resets_at: None,
        excerpt: None,
        tool_calls: Vec::new(),
        corrected: false,
        correction: None,
        launches: 0,
        duration_ms: 0,
        usage: None,
        run: run.display().to_string(),
        sandbox: None,
    }
}

/// How a reviewer's call ended: its reply's text, when it wrote one to accept.
type Replied = Done<String, String>;

/// The contract the launcher holds a reviewer's reply to: any text the reviewer wrote passes
/// to acceptance; an empty reply, or one that is the harness's own error notice and no verdict,
/// fails, so the launcher reads the harness's status from its output.
struct ReviewerReply {
    harness: Arc<crate::engine::harness::Harness>,
}

impl Contract for ReviewerReply {
    type Answer = String;
    type Miss = String;

    fn schema(&self) -> Value {
        Value::Object(Default::default())
    }

    fn check(&self, obj: &Map<String, Value>) -> Result<String, String> {
        let text = obj.get("text").and_then(Value::as_str).unwrap_or_default();
        if text.trim().is_empty() {
            return Err("no answer".into());
        }
        if block::parse_verdict_block(text).verdict.is_none()
            && call::failure_words(&self.harness, text, "").is_some()
        {
            return Err("the harness's own notice, no verdict".into());
        }
        Ok(text.to_string())
    }
}

/// A usage limit counts as the harness's own only when the harness also failed: a model can
/// write the words, but it cannot set its harness's exit status.
pub fn usage_limit_from_harness(done: &Replied) -> bool {
    done.status == Status::UsageLimit && done.exit_code != Some(0)
}

/// The reset time of a usage limit, read from the end of the attempt's output in the run folder
/// (the launcher's cause is cut short), else from the cause.
fn resets_at(done: &Replied, run: &Path, job: &str) -> Option<String> {
    call::last_words(run, job, done.attempts)
        .iter()
        .find_map(|text| accept::reset_time(text))
        .or_else(|| done.cause.as_deref().and_then(accept::reset_time))
}

/// Where a member whose opus spawn is refused goes next: its sonnet profile and that profile's
/// seat ([`accept::sonnet_fallback`]).
#[derive(Clone)]
pub struct SonnetFallback {
    pub profile: String,
    pub seat_name: String,
    pub seat: Seat,
}

/// The sonnet fallback of a member, with its seat read from the harness table.
fn sonnet_fallback(
    launcher: &Launcher,
    plan: &PanelPlan,
    m: &Member,
) -> Result<Option<SonnetFallback>> {
    let Some((profile, seat_name)) = accept::sonnet_fallback(plan, m) else {
        return Ok(None);
    };
    let seat = launcher
        .seat(&seat_name)
        .with_context(|| format!("member {}: sonnet profile {profile}", m.name))?;
    Ok(Some(SonnetFallback {
        profile,
        seat_name,
        seat,
    }))
}

/// What every call of one member shares: the launcher and the panel's token, the run folder,
/// what it reviews, its brief and its checkout.
pub struct MemberReview<'a> {
    pub launcher: &'a Launcher,
    /// Under --stop-when-decided: once cancelled, the call running is ended (its whole group)
    /// and none is started.
    pub cancel: Option<&'a Arc<Cancel>>,
    pub run: &'a Path,
    pub target: &'a Target,
    pub prompt: &'a str,
    pub checkout: &'a Path,
}

/// A member's next call, and what it carries over from the calls before it.
struct Call {
    seat: Seat,
    fallback: Option<SonnetFallback>,
    /// Added to each job name once the member runs at its sonnet profile.
    tag: &'static str,
    job_name: String,
    prompt: String,
    /// The tools this reviewer called, over its calls.
    calls: Option<Vec<String>>,
    /// A first call keeps its session where the harness can resume it for the correction.
    session: Session,
    /// While a resumed correction runs: the fresh call (brief and correction) that replaces it
    /// when the harness fails to resume.
    unresumed: Option<String>,
}

impl Call {
    /// A reviewer's first call (the `-r2` one's too): the brief alone, its session kept where
    /// it can be resumed, no tools counted yet.
    fn first(&mut self, reviewer: &str, prompt: &str) {
        self.session = first_session(&self.seat);
        self.job_name = format!("{reviewer}{}", self.tag);
        self.prompt = prompt.to_string();
        self.calls = None;
    }

    /// The launcher's job for this call; its session goes with it.
    fn job(&mut self, review: &MemberReview) -> Job {
        Job {
            cancel: review.cancel.cloned(),
            ..Job::reviewer(
                &self.job_name,
                self.seat.clone(),
                self.prompt.clone(),
                review.checkout.to_path_buf(),
                std::mem::take(&mut self.session),
            )
        }
    }
}

/// One member from its first launch to its record: the ladder ([`ladder::next`]) says what
/// follows each call; a changed checkout is refused whatever the reply. The record is
/// `cancelled` with the token's why as its reason once `review.cancel` is.
pub fn review_member(
    review: &MemberReview,
    mut rec: PrVerdictRecord,
    seat: &Seat,
    fallback: Option<SonnetFallback>,
) -> PrVerdictRecord {
    let started = Instant::now();
    let finish = |mut rec: PrVerdictRecord| {
        rec.duration_ms = started.elapsed().as_millis() as u64;
        rec
    };
    let before = match checkout::snapshot(review.checkout) {
        Ok(s) => s,
        Err(e) => {
            rec.reason = Some(format!("cannot read the checkout: {e:#}"));
            return finish(rec);
        }
    };
    let mut call = Call {
        seat: seat.clone(),
        fallback,
        tag: "",
        job_name: rec.member.clone(),
        prompt: review.prompt.to_string(),
        calls: None,
        session: first_session(seat),
        unresumed: None,
    };
    loop {
        let resuming = call.unresumed.take();
        let done = review.launcher.ask(
            &call.job(review),
            &ReviewerReply {
                harness: call.seat.harness.clone(),
            },
        );
        // The session this call kept, with the private folder that holds it: dropped (and the
        // folder removed) unless the correction resumes it.
        let kept: Option<(String, Arc<KeptFolder>)> = match (&done.session, &done.kept) {
            (Some(id), Some(folder)) => Some((id.clone(), Arc::clone(folder))),
            _ => None,
        };
        count_call(&mut rec, &done, &mut call.calls);
        if let Some(what) = checkout_changed(&before, review.checkout) {
            rec.status = PrStatus::CheckoutChanged;
            rec.reason = Some(what);
            return finish(rec);
        }
        let ended = read_reply(&mut rec, &done, call.calls.as_deref(), review.target);
        let rung = ladder::Rung {
            corrected: rec.corrected,
            fresh: rec.reviewer != rec.member,
            can_fall_back: call.fallback.is_some(),
            resuming: resuming.is_some(),
            session_kept: kept.is_some(),
        };
        match ladder::next(&ended, rung) {
            Step::Stop(status) => {
                stop(&mut rec, &ended, status, &done, review.run, &call.job_name);
                return finish(rec);
            }
            Step::Fallback => {
                let f = call.fallback.take().expect("a fallback was offered");
                call.seat = degrade(&mut rec, f);
                // Its own job names, so nothing of the refused launches is taken up again.
                call.tag = "-sonnet";
                call.first(&rec.reviewer, review.prompt);
            }
            Step::FreshReviewer => {
                if matches!(ended, Ended::Refused(_)) {
                    rec.excerpt = None;
                }
                rec.reviewer = ladder::fresh_name(&rec.member);
                call.first(&rec.reviewer, review.prompt);
            }
            Step::CorrectFresh => {
                rec.correction = Some(Correction::Fresh);
                call.job_name = format!("{}{}-correction-fresh", rec.reviewer, call.tag);
                call.prompt = resuming.expect("a resumed correction failed");
            }
            Step::Correct { .. } => {
                let Ended::Refused(refused) = &ended else {
                    unreachable!("only a refused reply is corrected")
                };
                correct(&mut rec, &mut call, kept, &refused.reason, review);
            }
        }
    }
}

/// The member's one correction: the session that read the code hears the short correction
/// alone where it was kept; else a fresh call gets the brief and the correction.
fn correct(
    rec: &mut PrVerdictRecord,
    call: &mut Call,
    kept: Option<(String, Arc<KeptFolder>)>,
    reason: &str,
    review: &MemberReview,
) {
    rec.corrected = true;
    call.job_name = format!("{}{}-correction", rec.reviewer, call.tag);
    let correction = brief::correction_prompt(reason, review.target);
    let whole = format!("{}{correction}", review.prompt);
    match kept {
        Some((id, folder)) => {
            rec.correction = Some(Correction::Resumed);
            call.prompt = correction.trim_start().to_string();
            // The job holds the folder until the resumed call is done.
            call.session = Session::Resume { id, folder };
            call.unresumed = Some(whole);
        }
        None => {
            rec.correction = Some(Correction::Fresh);
            call.prompt = whole;
        }
    }
}

/// A member's record once the ladder stops it with `status`: the reason (and excerpt) its end
/// gives; an accepted verdict is in it already.
fn stop(
    rec: &mut PrVerdictRecord,
    ended: &Ended,
    status: PrStatus,
    done: &Replied,
    run: &Path,
    job_name: &str,
) {
    rec.status = status;
    match ended {
        Ended::Accepted => {}
        Ended::Refused(r) => rec.reason = Some(r.reason.clone()),
        Ended::UsageLimit => {
            rec.reason = Some(accept::USAGE_LIMIT_REASON.into());
            rec.excerpt = done.cause.clone();
            rec.resets_at = resets_at(done, run, job_name);
        }
        Ended::ModelRefused => {
            rec.reason = Some(accept::SPAWN_REFUSED_REASON.into());
            rec.excerpt = done.cause.clone();
        }
        Ended::Timeout | Ended::Failed | Ended::Other(_) => {
            rec.reason = done.cause.clone();
            rec.excerpt = done.excerpt.clone();
        }
    }
}

/// What one call adds to its member's record: a launch (unless its decided panel never started
/// it), its usage, and the tools it called after those of the member's earlier calls.
fn count_call(rec: &mut PrVerdictRecord, done: &Replied, calls: &mut Option<Vec<String>>) {
    if !(done.status == Status::Cancelled && done.attempts == 0) {
        rec.launches += 1;
    }
    if let Some(u) = &done.usage {
        rec.usage.get_or_insert_with(Usage::default).add(u);
    }
    if let Some(c) = &done.tool_calls {
        calls.get_or_insert_with(Vec::new).extend(c.iter().cloned());
    }
    rec.tool_calls = calls.clone().unwrap_or_default();
}

/// The member's record at its sonnet profile, marked degraded; the seat it runs at now.
fn degrade(rec: &mut PrVerdictRecord, f: SonnetFallback) -> Seat {
    rec.profile = f.profile;
    rec.seat = f.seat_name;
    rec.harness = f.seat.harness.name.clone();
    rec.model = f.seat.model.clone();
    rec.degraded = true;
    f.seat
}

/// Reads one call's reply: an accepted verdict goes into the member's record; otherwise what
/// the call ended as, for the ladder.
fn read_reply(
    rec: &mut PrVerdictRecord,
    done: &Replied,
    calls: Option<&[String]>,
    target: &Target,
) -> Ended {
    match (done.status, done.answer.as_deref()) {
        (Status::Ok, Some(text)) => match accept::accept_verdict(text, target, calls) {
            Ok(a) => {
                take_verdict(rec, a, text);
                Ended::Accepted
            }
            Err(r) => {
                rec.excerpt = Some(call::excerpt(text, 300));
                Ended::Refused(r)
            }
        },
        (status, _) => ladder::ended(status, done.exit_code != Some(0), done.cause.as_deref()),
    }
}

/// What the reviewer changed in the checkout it was given to read, if anything (or that the
/// checkout can no longer be read): its record is then `checkout-changed`, whatever it said.
fn checkout_changed(before: &checkout::Snapshot, checkout: &Path) -> Option<String> {
    match checkout::snapshot(checkout) {
        Ok(after) => checkout::changes(before, &after),
        Err(e) => Some(format!(
            "the checkout cannot be read after the reviewer: {e:#}"
        )),
    }
}

/// A member's record once its reply is accepted: the verdict and what came with it.
fn take_verdict(rec: &mut PrVerdictRecord, a: accept::Accepted, text: &str) {
    rec.status = PrStatus::Ok;
    rec.verdict = Some(a.verdict);
    rec.reason = None;
    rec.excerpt = None;
    rec.ci_policy = a.ci_policy;
    rec.defect_class = a.defect_class;
    rec.findings = a.findings;
    rec.findings_truncated = a.findings_truncated;
    rec.follow_ups = a.follow_ups;
    rec.follow_ups_warning = a.follow_ups_warning.map(str::to_string);
    rec.owner_brief = a.owner_brief;
    rec.earlier_findings = earlier::parse_checklist(text);
}

/// How a reviewer's first call treats its session: kept when its harness can resume it (the
/// correction then resumes it), else forgotten.
fn first_session(seat: &Seat) -> Session {
    if seat.harness.resumes() && seat.session.is_some() {
        Session::Keep
    } else {
        Session::Forget
    }
}

/// A fresh folder under the temporary folder for the run's checkouts.
fn checkouts_dir() -> Result<PathBuf> {
    let base = std::env::temp_dir();
    for _ in 0..100 {
        let nonce = crate::contracts::fence::nonce(&[]);
        let dir = base.join(format!("panel-pr.{}", &nonce[..8]));
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                crate::engine::run_folder::private(&dir)
                    .context("cannot make the checkouts' folder private")?;
                return Ok(dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).context("cannot create a folder for the checkouts"),
        }
    }
    bail!("no free name for the checkouts' folder")
}

/// Removes the checkouts' folder after its worktrees.
struct Checkouts {
    dir: PathBuf,
    trees: Vec<Worktree>,
}

impl Drop for Checkouts {
    fn drop(&mut self) {
        self.trees.clear();
        let _ = crate::engine::beneath::remove_tree(&self.dir);
    }
}

/// What the command line gives a PR panel beyond its plan: the earlier rounds' records, the
/// fix proof, as given, and whether it stops once decided.
pub struct PrInputs<'a> {
    pub earlier: &'a [String],
    pub fix_proof: Option<&'a str>,
    /// `--stop-when-decided`: once a member's record holds a blocking FIX_FIRST
    /// ([`aggregate::record_decides`]), the members still out are ended or never launched.
    pub stop_when_decided: bool,
}

/// Reads the earlier rounds' pr-verdict records (each file oldest first, the files in order)
/// and the fix proof into what every brief of this round shows.
fn rounds(given: &PrInputs, target: &Target) -> Result<brief::Rounds> {
    let mut records = Vec::new();
    for path in given.earlier {
        let mut input = Input::open(path)?;
        let mut buf = String::new();
        while input.next_line(&mut buf)? {
            if buf.trim().is_empty() {
                continue;
            }
            let rec =
                crate::records::parse::<PrVerdictRecord>(&buf, &|| input.at(), &[VERDICT_TYPE])?;
            records.push(rec);
        }
    }
    let fix_firsts = earlier::earlier_fix_firsts(&records, target)
        .map_err(|e| anyhow::anyhow!("--earlier: {e}: earlier rounds are this PR's own"))?;
    let proof = match given.fix_proof {
        None => None,
        Some(given) => {
            let (proof, warning) =
                fix_proof::resolve(given, &target.head).map_err(anyhow::Error::msg)?;
            if let Some(w) = warning {
                eprintln!("panel-judge: {w}");
            }
            Some(proof)
        }
    };
    Ok(brief::Rounds {
        earlier: earlier::earlier_findings(&fix_firsts),
        proof,
    })
}

/// Each member's seat, which must have a reviewer mode to read a checkout.
fn reviewer_seats(launcher: &Launcher, plan: &PanelPlan) -> Result<Vec<Seat>> {
    plan.members
        .iter()
        .map(|m| {
            let seat = launcher
                .seat(&m.seat)
                .with_context(|| format!("member {}", m.name))?;
            if seat.harness.reviewer.is_none() {
                bail!(
                    "member {}: harness {} has no reviewer mode, so it cannot read a checkout \
                        (claude and codex can)",
                    m.name,
                    seat.harness.name
                );
            }
            Ok(seat)
        })
        .collect()
}

/// `--repo`, whole, once git says it is a repository.
fn git_repository(repo: &Path) -> Result<PathBuf> {
    let repo = repo
        .canonicalize()
        .with_context(|| format!("{}: no such repository", repo.display()))?;
    checkout::git(&repo, &["rev-parse", "--git-dir"])
        .with_context(|| format!("{}: not a git repository", repo.display()))?;
    Ok(repo)
}

/// `--dry-run`: each member's command line, a blank line between, at a notional checkout.
fn print_commands(
    launcher: &Launcher,
    plan: &PanelPlan,
    seats: &[Seat],
    prompt_for: &dyn Fn(&Member, &Path) -> String,
) -> Result<ExitCode> {
    let notional = std::env::temp_dir().join("panel-pr.CHECKOUT");
    let mut out = crate::engine::output::stdout();
    for (i, (m, seat)) in plan.members.iter().zip(seats).enumerate() {
        let dir = notional.join(&m.name);
        let prompt = prompt_for(m, &dir);
        let job = Job::reviewer(&m.name, seat.clone(), prompt, dir, first_session(seat));
        let gap = if i == 0 { "" } else { "\n" };
        writeln!(out, "{gap}{}", launcher.command_line(&job)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The folder the members' checkouts go in. A root caller's reviewers run as another id: they
/// (and a jail's first process, which opens their checkouts before it is that id) pass through
/// to their checkouts, and list nothing.
fn open_checkouts(launcher: &Launcher) -> Result<Checkouts> {
    let checkouts = Checkouts {
        dir: checkouts_dir()?,
        trees: Vec::new(),
    };
    if launcher.ctx.walls.ids.is_some() {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&checkouts.dir, std::fs::Permissions::from_mode(0o711))
            .context("cannot open the checkouts' folder to the reviewers' ids")?;
    }
    Ok(checkouts)
}

/// One member's record: into its folder when it ran now (not kept from an earlier run), on the
/// progress line, then on standard output and into the run folder's ledger.
fn emit(
    out: &mut crate::engine::run_folder::Emitter,
    launcher: &Launcher,
    run: &Path,
    rec: &PrVerdictRecord,
    fresh: bool,
) -> Result<()> {
    let line = serde_json::to_string(rec)?;
    if fresh {
        let dir = run.join(&rec.member);
        if crate::engine::run_folder::dir(&dir) {
            crate::engine::run_folder::file(&dir.join("record.json"), format!("{line}\n"));
        }
    }
    if launcher.progress.is_on() {
        let what = rec.verdict.map_or(rec.status.as_str(), |v| v.as_str());
        let how = if fresh {
            format!("{:.1}s", rec.duration_ms as f64 / 1000.0)
        } else {
            "kept".into()
        };
        launcher
            .progress
            .say(&format!("panel-judge: {} {what} ({how})", rec.member));
    }
    out.emit(&line)
}

/// Each member to review: its index, its checkout, its prompt.
type Work = Vec<(usize, PathBuf, String)>;

/// A checkout of the plan's head for each member to run, and its prompt, which names it.
fn check_out(launcher: &Launcher, panel: &PrPanel, to_run: &[usize]) -> Result<(Checkouts, Work)> {
    let plan = panel.plan;
    let mut checkouts = open_checkouts(launcher)?;
    let mut work = Vec::new();
    for &i in to_run {
        let m = &plan.members[i];
        let dir = checkouts.dir.join(&m.name);
        let tree = Worktree::add(panel.repo, &dir, plan.base.as_deref(), &plan.head)?;
        let prompt = (panel.prompt_for)(m, &tree.dir);
        work.push((i, tree.dir.clone(), prompt));
        checkouts.trees.push(tree);
    }
    Ok((checkouts, work))
}

/// The `--contract pr` run of panel-judge.
pub fn judge(
    plan_path: &str,
    repo: &Path,
    given: &PrInputs,
    dry_run: bool,
    launcher: Launcher,
) -> Result<ExitCode> {
    let plan = crate::rules::plan::read::read_plan(plan_path)?;
    if plan.members.is_empty() {
        bail!("{plan_path}: the plan has no members");
    }
    let target = target(&plan);
    let rounds = rounds(given, &target)?;
    let seats = reviewer_seats(&launcher, &plan)?;
    let repo = git_repository(repo)?;
    let change = checkout::change(&repo, plan.base.as_deref(), &plan.head, MAX_BRIEF_DIFF);
    let nonce = crate::contracts::fence::nonce(&[change.diff.as_deref().unwrap_or("")]);
    let prompt_for = |m: &Member, dir: &Path| {
        brief::shape_brief(
            &m.brief_id,
            &target,
            &dir.display().to_string(),
            &change,
            &nonce,
            &rounds,
        )
    };
    if dry_run {
        return print_commands(&launcher, &plan, &seats, &prompt_for);
    }
    let panel = PrPanel {
        plan: &plan,
        target: &target,
        rounds: &rounds,
        seats: &seats,
        repo: &repo,
        prompt_for: &prompt_for,
        stop_when_decided: given.stop_when_decided,
    };
    review_panel(&panel, launcher)
}

/// A PR panel read and readied, as [`review_panel`] asks it.
struct PrPanel<'a> {
    plan: &'a PanelPlan,
    target: &'a Target,
    rounds: &'a brief::Rounds,
    seats: &'a [Seat],
    repo: &'a Path,
    prompt_for: &'a dyn Fn(&Member, &Path) -> String,
    stop_when_decided: bool,
}

/// The members kept from an earlier run emitted, the rest reviewed in their checkouts, each
/// record emitted as it comes.
fn review_panel(panel: &PrPanel, mut launcher: Launcher) -> Result<ExitCode> {
    let (plan, target, rounds, seats) = (panel.plan, panel.target, panel.rounds, panel.seats);
    // A PR panel's folder is its own to take up again: members already answered are kept.
    launcher.ctx.opts.resume = true;
    let run = launcher.start()?.to_path_buf();
    let kept: Vec<Option<PrVerdictRecord>> = plan
        .members
        .iter()
        .map(|m| kept_record(&run, plan, m))
        .collect();
    let to_run: Vec<usize> = (0..plan.members.len())
        .filter(|&i| kept[i].is_none())
        .collect();
    launcher.check_executables(to_run.iter().map(|&i| &seats[i]))?;
    let fallbacks = plan
        .members
        .iter()
        .map(|m| sonnet_fallback(&launcher, plan, m))
        .collect::<Result<Vec<_>>>()?;

    let mut out = crate::engine::run_folder::Emitter::new(&run.join("pr-verdicts.jsonl"))?;
    let mut emit = |rec: &PrVerdictRecord, fresh: bool| emit(&mut out, &launcher, &run, rec, fresh);
    // Under --stop-when-decided, one token for the whole panel: the first blocking FIX_FIRST
    // (a kept one too) cancels it, which ends every member still running and starts no more.
    let token: Option<Arc<Cancel>> = panel.stop_when_decided.then(Arc::default);
    let proof = rounds.proof.as_ref().map(|p| p.verdict);
    let decide = |rec: &PrVerdictRecord| {
        if let Some(t) = &token
            && aggregate::record_decides(plan, rec, proof)
        {
            t.cancel(aggregate::why_decided(&rec.member));
        }
    };
    for rec in kept.iter().flatten() {
        emit(rec, false)?;
        decide(rec);
    }
    let (checkouts, work) = check_out(&launcher, panel, &to_run)?;
    let workers = launcher.ctx.opts.jobs.unwrap_or(work.len()).max(1);
    launcher.progress.expect(work.len());
    let mut failure = None;
    let launcher = &launcher;
    crate::engine::call::fan_out(
        work,
        workers,
        |_, (i, dir, prompt)| {
            let m = &plan.members[i];
            let mut rec = record(plan, m, &seats[i], &run);
            rec.sandbox = Some(launcher.sandbox().to_string());
            let fallback = fallbacks[i].clone();
            let review = MemberReview {
                launcher,
                cancel: token.as_ref(),
                run: &run,
                target,
                prompt: &prompt,
                checkout: &dir,
            };
            review_member(&review, rec, &seats[i], fallback)
        },
        |_, rec| {
            decide(&rec);
            if let Err(e) = emit(&rec, true) {
                failure.get_or_insert(e);
            }
        },
    );
    drop(checkouts);
    if let Some(e) = failure {
        return Err(e);
    }
    if crate::engine::lifecycle::failure().is_none() {
        out.close("pr verdicts", &run);
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::harness::Table;
    use std::collections::BTreeMap;

    fn plan() -> PanelPlan {
        let text = r#"{"type":"plan","repo":"acme/app","pr":7,"head":"0123456789abcdef","base":null,"kind":null,
            "class":"standard","headroom":{"opus":true},"members":[{"name":"rp-acme-app-7-01234567-correctness",
            "shape":"correctness","briefId":"correctness","profile":"bd-reviewer","seat":"claude:sonnet",
            "blocking":true,"degraded":false,"reason":"always"}],"spendEstimate":1,"sonnetFor":{}}"#;
        serde_json::from_str(text).unwrap()
    }

    fn seat() -> Seat {
        Seat::parse("claude:sonnet", &Table::builtin(), &BTreeMap::new()).unwrap()
    }

    #[test]
    fn a_kept_record_is_reused_only_for_the_same_input_and_an_answer() {
        let p = plan();
        let m = &p.members[0];
        let mut rec = record(&p, m, &seat(), Path::new("/run"));
        rec.status = PrStatus::Ok;
        assert!(reusable(&rec, &p, m));
        let mut other = rec.clone();
        other.repo = "ACME/app".into();
        assert!(reusable(&other, &p, m), "repository case is ignored");
        for change in [
            |r: &mut PrVerdictRecord| r.head = "f".repeat(16),
            |r: &mut PrVerdictRecord| r.pr = Some(8),
            |r: &mut PrVerdictRecord| r.brief_hash = "sha256:old".into(),
            |r: &mut PrVerdictRecord| r.status = PrStatus::Timeout,
            |r: &mut PrVerdictRecord| r.status = PrStatus::Interrupted,
            |r: &mut PrVerdictRecord| r.status = PrStatus::UsageLimit,
        ] {
            let mut r = rec.clone();
            change(&mut r);
            assert!(!reusable(&r, &p, m), "{r:?}");
        }
    }

    #[test]
    fn a_usage_limit_is_the_harness_s_only_when_it_failed() {
        let mut done: Replied = Done {
            answer: None,
            status: Status::UsageLimit,
            cause: None,
            excerpt: None,
            attempts: 1,
            duration: std::time::Duration::ZERO,
            exit_code: Some(1),
            usage: None,
            tool_calls: None,
            refused: None,
            session: None,
            kept: None,
            settled: false,
            live: None,
        };
        assert!(usage_limit_from_harness(&done));
        done.exit_code = Some(0);
        assert!(!usage_limit_from_harness(&done));
        done.exit_code = None;
        assert!(
            usage_limit_from_harness(&done),
            "killed by a signal: not the model's doing"
        );
    }

    #[test]
    fn the_reviewer_reply_contract_hands_the_harness_its_own_notices() {
        let contract = ReviewerReply {
            harness: seat().harness,
        };
        let check = |obj: &Map<String, Value>| contract.check(obj);
        let obj = |t: &str| {
            let mut m = Map::new();
            m.insert("text".into(), Value::String(t.into()));
            m
        };
        assert_eq!(
            check(&obj("I looked; it is fine.")).as_deref(),
            Ok("I looked; it is fine.")
        );
        assert!(check(&obj("Verdict: MERGE\nAPI Error: none here")).is_ok());
        assert!(check(&obj("  ")).is_err());
        assert!(check(&obj("Claude AI usage limit reached|1767225600")).is_err());
    }
}
