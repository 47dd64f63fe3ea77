//! hrr-reports owns what a harness run produces, apart from the runner that produces it:
//! the one status enum and the mapping from raw outcomes and expectations to it
//! (`status`), the result records written to `results.json` (`result`), JUnit XML
//! (`junit`), the Markdown step summary (`markdown`), the merging of many shards and
//! families into one report (`merge`), and the self-contained HTML page of a merged
//! report (`html`).

pub mod html;
pub mod junit;
pub mod markdown;
pub mod merge;
pub mod result;
pub mod status;

pub use result::{
    AttemptResult, CaseResult, CheckResult, DeclaredMatches, ExcludedBytes, RunReport, Totals,
};
pub use status::{classify, Expected, RawOutcome, Status};
