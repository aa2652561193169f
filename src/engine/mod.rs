//! Everything that runs a process. Where to look:
//!
//! | what | where |
//! | --- | --- |
//! | the harness rows (data) and seats | [`harness`], `harness/builtin.json` |
//! | a judge's call: the job, the launcher, one attempt and its process, the transcript, finding the answer | [`call`] |
//! | signals, a closed stdout, the exit status of a stopped run | [`lifecycle`] |
//! | standard output whose write errors name it | [`output`] |
//! | the login broker: each judge's login found, refreshed once, given without its refresh token | [`logins`] |
//! | the user's configuration carried into a private HOME, and the row's files | [`carried`] |
//! | file-system calls beneath a judge's folder that follow no link it planted | [`beneath`] |
//! | `--doctor`: each harness's program, version and login; the walls this machine allows | [`doctor`] |
//! | the run folder, the sandbox, the ledger | [`run_folder`] |
//! | where run folders go unless named, listing and pruning them | [`runs`] |
//! | the history every verdict record is appended to | [`history`] |
//! | the supervisor beside each judge: nothing outlives the tool | [`sandbox`] |
//! | a budget for a run: estimates, the price table, the spent and in-flight sums | [`budget`] |
//! | the status line on a terminal (judges, time, tokens, cost) | [`progress`] |
//! | a dry run: each judge as a bash block that runs as pasted | [`paste`] |
//! | a machine-wide cap per harness | [`slots`] |
//! | a pull request reviewer's checkout | [`checkout`] |

pub mod beneath;
pub mod budget;
pub mod call;
pub mod carried;
pub mod checkout;
pub mod clock;
pub mod doctor;
pub mod harness;
pub mod history;
pub mod lifecycle;
pub mod logins;
pub mod output;
pub mod paste;
pub mod progress;
pub mod run_folder;
pub mod runs;
pub mod sandbox;
pub mod slots;
