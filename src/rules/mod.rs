//! The seeds' decisions as plain functions over records. Each rule is one named function (the
//! statistics they use are `crate::stats`):
//!
//! | rule | where |
//! | --- | --- |
//! | pass, fail or no decision against a threshold (`--agree`) | [`decision::decide`] |
//! | a panel decided before its last judge answers (`--stop-when-decided`) | [`decision::Standing::settled`] |
//! | one judge in two costumes | [`decorrelation`] |
//! | a seat that missed its canary, and whether its verdicts count | [`canary::discounted`] |
//! | which findings name one problem | [`grouping::relate`] |
//! | the vote rules, and dropping a finding | [`votes::rule`] |
//! | a finding's fate fixed before its last voter votes (`--stop-when-decided`) | [`votes::fixed_fate`] |
//! | the synthesised panel's pass rule | [`votes::panel_decision`] |
//! | the threshold panel over review records | [`threshold::threshold`] |
//! | where the work goes after the votes | [`routes`] |
//! | how far a judge or panel agrees with gold labels, a gate on it, a corrected share | [`gold`] |
//! | a pairwise panel's preference | [`decision::prefer`] |
//! | a PR's class, plan, accepted verdicts and aggregate | [`classify`], [`plan`], [`pr`] |
//! | what a PR reviewer gets after a reply that does not count (correction, `-r2`, sonnet) | [`pr::ladder`] |

pub mod canary;
pub mod classify;
pub mod consensus;
pub mod decision;
pub mod decorrelation;
pub mod gold;
pub mod grouping;
pub mod plan;
pub mod pr;
pub mod routes;
pub mod threshold;
pub mod votes;
