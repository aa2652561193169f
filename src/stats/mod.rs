//! Statistics over counts: how far judges agree beyond chance, how far a figure can be trusted,
//! and the thresholds the ledger flags a figure past. Pure arithmetic on numbers, below every
//! other layer: it names no record, and rules and tools read it.
//!
//! | what | where |
//! | --- | --- |
//! | how far judges agree beyond chance (Cohen's and Fleiss' kappa, Krippendorff's alpha), Wilson's interval on a share | [`agreement`] |
//! | how far an agreement figure can be trusted (a bootstrap over panels) | [`bootstrap`] |
//! | the ledger's flags: how far past a line a figure must be, on how many panels | [`thresholds`] |

pub mod agreement;
pub mod bootstrap;
pub mod thresholds;
