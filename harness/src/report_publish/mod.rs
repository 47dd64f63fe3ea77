//! `report publish`: a pull request's results, from the artifact a `workflow_run` workflow
//! downloaded, posted as one check run. `untrusted` reads the artifact's files, `junit`
//! parses the JUnit into a conclusion and its failing testcases, `check_run` posts them
//! with annotations. (Control outcomes on a pull request are `control::publish`.)

pub mod check_run;
pub mod junit;
pub mod untrusted;
