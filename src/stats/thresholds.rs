//! The lines `panel-tally --ledger` flags a judge, a pair or a sub-panel past. A flag is raised
//! only when a figure's whole 95 % interval is past its line, so each line says what is worth
//! saying, and the interval says whether the history can say it.

/// Every flag on a rate (rubber-stamp, redundant, position-bias) needs this many panels, or
/// shared panels, or answers: below about 30 the interval of a share is wide enough that a
/// flag would mostly report the small sample, not the judge.
pub const MIN_PANELS: u64 = 30;

/// `redundant`: two judges whose Cohen's kappa is this far beyond chance are one judge paid
/// twice. 0.8 is where the usual readings of kappa (Landis and Koch, McHugh) begin "almost
/// perfect" or "strong" agreement: past it the second judge rarely says anything new.
pub const REDUNDANT_KAPPA: f64 = 0.8;

/// `rubber-stamp`: a judge that says holds this often is not reading. 0.95 leaves room for a
/// history of mostly good candidates; a judge past it breaks fewer than one in twenty.
pub const RUBBER_STAMP: f64 = 0.95;

/// `abstains`: a judge that gives no verdict on this share of its panels costs without
/// answering; at one panel in five it also leaves its panels short of a decision often enough
/// to matter.
pub const ABSTAINS: f64 = 0.2;

/// `contrarian`: a judge against the others' majority this often. A judge that reads the same
/// question as the others is against them rarely; at 0.4 it is near a coin toss, reading
/// something else or guessing.
pub const CONTRARIAN: f64 = 0.4;

/// A sub-panel is as good as the full panel when its outcome matched the panel's on this share
/// of panels: 0.95, the same decision but for one panel in twenty, is what the smaller panel
/// saves its cost for.
pub const SUB_PANEL_MATCH: f64 = 0.95;

/// `position-bias`: a pairwise judge that prefers the answer shown first this far from half the
/// time, either way (0.6 or more, 0.4 or less): order alone then decides one preference in ten
/// that a judge without bias would give the other answer, enough to tip a close panel.
pub const POSITION_BIAS: f64 = 0.1;
