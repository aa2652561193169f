//! What a PR reviewer gets after a call that gave no accepted verdict (docs/rules.md,
//! "Acceptance"): one correction, sent by resume where it can be; one fresh `-r2` reviewer; one
//! launch at the sonnet profile after a refused opus model; else the member stops. The steps
//! themselves (launching, the sessions) are `tools::judge::pr`'s.

use crate::records::Status;
use crate::records::pr::PrStatus;
use crate::rules::pr::accept::Refused;

/// How one call of a member ended, as the ladder reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum Ended {
    /// Its reply was accepted: a verdict.
    Accepted,
    /// Its reply was refused: malformed (a correction or a fresh reviewer may follow) or
    /// depth-floor (final).
    Refused(Refused),
    /// The harness's own usage-limit notice: final.
    UsageLimit,
    /// The harness refused the model in its own words, exiting non-zero.
    ModelRefused,
    /// Silent past the deadline.
    Timeout,
    /// The harness failed (a resumed correction that fails is tried fresh).
    Failed,
    /// Any other end, final with this status.
    Other(PrStatus),
}

/// What a call that gave no reply to accept ended as: `harness_failed` when the harness exited
/// non-zero or was killed, since a model can write a notice's words but cannot set its
/// harness's exit status; `cause` is the launcher's.
pub fn ended(status: Status, harness_failed: bool, cause: Option<&str>) -> Ended {
    let malformed = |reason: String| {
        Ended::Refused(Refused {
            status: PrStatus::Malformed,
            reason,
        })
    };
    match status {
        Status::UsageLimit if harness_failed => Ended::UsageLimit,
        Status::UsageLimit => malformed(
            "usage-limit-words: the reviewer wrote a usage-limit notice; the harness did not fail"
                .into(),
        ),
        Status::Ok | Status::Unreadable => {
            malformed(format!("no-verdict: {}", cause.unwrap_or("no answer")))
        }
        Status::ModelRefused if harness_failed => Ended::ModelRefused,
        Status::ModelRefused => malformed(
            "model-refused-words: the reviewer wrote a refused-model notice; the harness did not fail"
                .into(),
        ),
        Status::Timeout => Ended::Timeout,
        Status::Failed => Ended::Failed,
        s => Ended::Other(status_of(s)),
    }
}

/// A status of the launcher as a member's status.
pub fn status_of(s: Status) -> PrStatus {
    match s {
        Status::Ok | Status::Unreadable | Status::CanaryMissed | Status::PositionInconsistent => {
            PrStatus::Malformed
        }
        Status::Timeout => PrStatus::Timeout,
        Status::Failed => PrStatus::Failed,
        Status::NotFound => PrStatus::NotFound,
        Status::UsageLimit => PrStatus::UsageLimit,
        Status::RateLimited => PrStatus::RateLimited,
        Status::ModelRefused => PrStatus::ModelRefused,
        Status::Interrupted => PrStatus::Interrupted,
        // Left out under --stop-when-decided: another member's blocking FIX_FIRST decided.
        Status::Cancelled => PrStatus::Cancelled,
        Status::OutputLimit => PrStatus::OutputLimit,
    }
}

/// Where a member stands on the ladder when a call ends.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rung {
    /// It had its one correction already.
    pub corrected: bool,
    /// The reviewer is the fresh `-r2` one.
    pub fresh: bool,
    /// A sonnet profile is still offered (its opus model was not refused yet).
    pub can_fall_back: bool,
    /// The call was a resumed correction.
    pub resuming: bool,
    /// The call kept a session the correction can resume.
    pub session_kept: bool,
}

/// What a member does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The correction: the kept session resumed with it alone (`resume`), else a fresh call
    /// with the brief and it.
    Correct { resume: bool },
    /// The resumed correction failed: the correction goes to a fresh call instead.
    CorrectFresh,
    /// One fresh reviewer under the `-r2` name, with the brief alone.
    FreshReviewer,
    /// Once more at the sonnet profile, degraded.
    Fallback,
    /// The member's record is final, with this status.
    Stop(PrStatus),
}

/// The next step after a call that ended as `ended`, at `rung`.
pub fn next(ended: &Ended, rung: Rung) -> Step {
    match ended {
        Ended::Accepted => Step::Stop(PrStatus::Ok),
        Ended::Refused(r) if r.status == PrStatus::Malformed && !rung.corrected => Step::Correct {
            resume: rung.session_kept,
        },
        Ended::Refused(r) if r.status == PrStatus::Malformed && !rung.fresh => Step::FreshReviewer,
        Ended::Refused(r) => Step::Stop(r.status),
        Ended::UsageLimit => Step::Stop(PrStatus::UsageLimit),
        Ended::ModelRefused if rung.can_fall_back => Step::Fallback,
        Ended::ModelRefused => Step::Stop(PrStatus::ModelRefused),
        Ended::Timeout if !rung.fresh => Step::FreshReviewer,
        Ended::Timeout => Step::Stop(PrStatus::Timeout),
        Ended::Failed if rung.resuming => Step::CorrectFresh,
        Ended::Failed => Step::Stop(PrStatus::Failed),
        Ended::Other(s) => Step::Stop(*s),
    }
}

/// The name (docs/rules.md, "Acceptance") of the fresh reviewer that replaces a silent member
/// or one whose reply is still malformed after its correction.
pub fn fresh_name(member: &str) -> String {
    format!("{member}-r2")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn malformed() -> Ended {
        Ended::Refused(Refused {
            status: PrStatus::Malformed,
            reason: "no-verdict: no answer".into(),
        })
    }

    #[test]
    fn an_accepted_verdict_stops_the_member() {
        assert_eq!(
            next(&Ended::Accepted, Rung::default()),
            Step::Stop(PrStatus::Ok)
        );
    }

    #[test]
    fn a_malformed_reply_gets_one_correction_sent_by_resume() {
        // Seed 002: "A malformed reply gets one correctionPrompt per member, sent by resume".
        let kept = Rung {
            session_kept: true,
            ..Rung::default()
        };
        assert_eq!(next(&malformed(), kept), Step::Correct { resume: true });
        // No session to resume (docs/rules.md, "Acceptance"): a fresh call with the brief and
        // the correction.
        assert_eq!(
            next(&malformed(), Rung::default()),
            Step::Correct { resume: false }
        );
        // The fresh reviewer has its own one correction.
        let fresh = Rung {
            fresh: true,
            ..Rung::default()
        };
        assert_eq!(next(&malformed(), fresh), Step::Correct { resume: false });
    }

    #[test]
    fn a_failed_resume_sends_the_correction_fresh() {
        // Seed 002: the correction is "sent by resume"; where the harness cannot resume, the
        // correction still goes once, to a fresh call (docs/rules.md, "Acceptance").
        let resuming = Rung {
            corrected: true,
            resuming: true,
            ..Rung::default()
        };
        assert_eq!(next(&Ended::Failed, resuming), Step::CorrectFresh);
        let plain = Rung {
            corrected: true,
            ..Rung::default()
        };
        assert_eq!(next(&Ended::Failed, plain), Step::Stop(PrStatus::Failed));
    }

    #[test]
    fn an_uncorrected_reply_gets_one_fresh_r2_reviewer_then_stops() {
        // Seed 002: "silence past the deadline or an uncorrected reply gets one fresh reviewer
        // under the -r2 name".
        let corrected = Rung {
            corrected: true,
            ..Rung::default()
        };
        assert_eq!(next(&malformed(), corrected), Step::FreshReviewer);
        let fresh_corrected = Rung {
            corrected: true,
            fresh: true,
            ..Rung::default()
        };
        assert_eq!(
            next(&malformed(), fresh_corrected),
            Step::Stop(PrStatus::Malformed)
        );
    }

    #[test]
    fn silence_gets_one_fresh_r2_reviewer_and_a_silent_r2_is_a_timeout() {
        // Seed 002: "silence past the deadline ... gets one fresh reviewer under the -r2 name,
        // and a member still silent after it is a timeout".
        assert_eq!(next(&Ended::Timeout, Rung::default()), Step::FreshReviewer);
        let fresh = Rung {
            fresh: true,
            ..Rung::default()
        };
        assert_eq!(next(&Ended::Timeout, fresh), Step::Stop(PrStatus::Timeout));
    }

    #[test]
    fn the_fresh_reviewer_is_named_r2() {
        assert_eq!(
            fresh_name("rp-acme-app-7-01234567-tests"),
            "rp-acme-app-7-01234567-tests-r2"
        );
    }

    #[test]
    fn a_refused_opus_spawn_is_tried_once_at_sonnet() {
        // Seed 002: "An opus spawn the dispatch refuses is tried once at its sonnet profile and
        // the member is degraded; a second refusal is a none with SPAWN_REFUSED_REASON."
        let offered = Rung {
            can_fall_back: true,
            ..Rung::default()
        };
        assert_eq!(next(&Ended::ModelRefused, offered), Step::Fallback);
        assert_eq!(
            next(&Ended::ModelRefused, Rung::default()),
            Step::Stop(PrStatus::ModelRefused)
        );
        // The refusal counts only as the harness's own: the same words from the reviewer are a
        // malformed reply.
        assert_eq!(ended(Status::ModelRefused, true, None), Ended::ModelRefused);
        assert!(matches!(
            ended(Status::ModelRefused, false, None),
            Ended::Refused(Refused { status: PrStatus::Malformed, ref reason })
                if reason.starts_with("model-refused-words:")
        ));
    }

    #[test]
    fn a_usage_limit_notice_is_final() {
        // Seed 002: "A usage-limit notice is final." Even with a sonnet profile offered and no
        // correction spent.
        let any = Rung {
            can_fall_back: true,
            session_kept: true,
            ..Rung::default()
        };
        assert_eq!(ended(Status::UsageLimit, true, None), Ended::UsageLimit);
        assert_eq!(
            next(&Ended::UsageLimit, any),
            Step::Stop(PrStatus::UsageLimit)
        );
        // The words alone, from a harness that did not fail, are the reviewer's: malformed.
        assert!(matches!(
            ended(Status::UsageLimit, false, None),
            Ended::Refused(Refused { status: PrStatus::Malformed, ref reason })
                if reason.starts_with("usage-limit-words:")
        ));
    }

    #[test]
    fn a_depth_floor_refusal_and_other_failures_stop_at_once() {
        // Seed 002 corrects only a malformed reply; a verdict without an investigative call
        // (docs/rules.md, "Acceptance": the depth floor) is not malformed.
        let depth = Ended::Refused(Refused {
            status: PrStatus::DepthFloor,
            reason: "depth-floor".into(),
        });
        assert_eq!(
            next(&depth, Rung::default()),
            Step::Stop(PrStatus::DepthFloor)
        );
        for (status, pr) in [
            (Status::NotFound, PrStatus::NotFound),
            (Status::RateLimited, PrStatus::RateLimited),
            (Status::Interrupted, PrStatus::Interrupted),
            (Status::Cancelled, PrStatus::Cancelled),
            (Status::OutputLimit, PrStatus::OutputLimit),
        ] {
            let e = ended(status, true, None);
            assert_eq!(e, Ended::Other(pr));
            assert_eq!(next(&e, Rung::default()), Step::Stop(pr));
        }
        assert_eq!(
            ended(Status::Unreadable, true, Some("no JSON")),
            Ended::Refused(Refused {
                status: PrStatus::Malformed,
                reason: "no-verdict: no JSON".into(),
            })
        );
    }
}
