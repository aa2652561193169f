//! Everything that runs a process. Where to look:
//!
//! | what | where |
//! | --- | --- |
//! | the harness rows (data) and seats | [`harness`], `harness/builtin.json` |
//! | a job, how it ended, the [`ask::Asker`] of panel-merge and panel-vote | [`ask`] |
//! | the launcher: the run's folders, retries, many jobs at once | [`launcher`] |
//! | one attempt as a value: its folders, files, walls and launch | [`attempt`] |
//! | what every attempt of a run shares: options, the user's environment, the walls | [`context`] |
//! | argv, how the prompt travels, the judge's environment | [`argv`] |
//! | one process: its group, its deadline, where the group is killed | [`launch`] |
//! | signals, a closed stdout, the exit status of a stopped run | [`lifecycle`] |
//! | standard output whose write errors name it | [`output`] |
//! | the login broker: each judge's login found, refreshed once, given without its refresh token | [`logins`] |
//! | the user's configuration carried into a private HOME, and the row's files | [`carried`] |
//! | file-system calls beneath a judge's folder that follow no link it planted | [`beneath`] |
//! | `--doctor`: each harness's program, version and login; the walls this machine allows | [`doctor`] |
//! | reading an answer; a failure's words becoming a status | [`answer`] |
//! | the run folder, the sandbox, the ledger | [`run_folder`] |
//! | where run folders go unless named, listing and pruning them | [`runs`] |
//! | the history every verdict record is appended to | [`history`] |
//! | the supervisor beside each judge: nothing outlives the tool | [`sandbox`] |
//! | many jobs at once, or in waves | [`fanout`] |
//! | a seat's first judge warming the provider's cache for the others | [`warm`] |
//! | ending the judges a decided panel no longer needs | [`cancel`] |
//! | a budget for a run: estimates, the price table, the spent and in-flight sums | [`budget`] |
//! | the status line on a terminal (judges, time, tokens, cost) | [`progress`] |
//! | jq filters over a harness's output | [`extract`] |
//! | which lines of an output a row's filter can read anything from | [`sieve`] |
//! | a dry run: each judge as a bash block that runs as pasted | [`paste`] |
//! | a judge's stdout as it arrives: the run folder's copy, its budget, its events | [`transcript`] |
//! | recorded answers (`replay:FILE`) | [`replay`] |
//! | a machine-wide cap per harness | [`slots`] |
//! | a pull request reviewer's checkout | [`checkout`] |

pub mod answer;
pub mod argv;
pub mod ask;
pub mod attempt;
pub mod beneath;
pub mod budget;
pub mod cancel;
pub mod carried;
pub mod checkout;
pub mod clock;
pub mod context;
pub mod doctor;
pub mod extract;
pub mod fanout;
pub mod harness;
pub mod history;
pub mod launch;
pub mod launcher;
pub mod lifecycle;
pub mod logins;
pub mod output;
pub mod paste;
pub mod progress;
pub mod replay;
pub mod run_folder;
pub mod runs;
pub mod sandbox;
pub mod sieve;
pub mod slots;
pub mod transcript;
pub mod warm;
