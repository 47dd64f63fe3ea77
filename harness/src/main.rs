//! `hrr-harness`: the command line (its shape is `cli`). Each subcommand is a thin layer over a module:
//! `matrix` (hrr-matrix), `build` (builder), `run` (runner + output), `report merge`
//! (hrr-reports), `report fetch` (fetch), `report publish` (report_publish), `workflows`
//! (hrr-workflows), `control` (control). Every command ends with an `exit::Exit`, listed
//! in `--help` from the same enum.

mod archives;
mod builder;
mod cli;
mod commands;
mod control;
mod error;
mod exit;
mod fetch;
mod github;
mod gpu;
mod output;
mod pool;
mod process;
mod repo;
mod repocheck;
mod report_publish;
mod runner;
mod service;
mod standin;
mod toolchain;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Cmd, ReportCmd};
use crate::exit::Exit;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    Exit::Ok
                }
                _ => Exit::Usage,
            }
            .into();
        }
    };
    // Before any thread: the harness's credentials out of reach of every child.
    process::secrets::withdraw();
    process::install_interrupt_handler();
    let result = match &cli.command {
        Cmd::Matrix(m) => commands::matrix(cli.matrix.as_deref(), m),
        Cmd::Build(b) => commands::build(cli.matrix.as_deref(), &b.opts),
        Cmd::Run(r) => commands::run(cli.matrix.as_deref(), r),
        Cmd::Report(ReportCmd::Merge {
            dirs,
            output,
            expect,
        }) => commands::merge_with(cli.matrix.as_deref(), dirs, output, expect),
        Cmd::Report(ReportCmd::Fetch(f)) => commands::fetch(cli.matrix.as_deref(), f),
        Cmd::Report(ReportCmd::Publish(p)) => commands::publish(cli.matrix.as_deref(), p),
        Cmd::Workflows(w) => commands::workflows(cli.matrix.as_deref(), w),
        Cmd::Control(c) => commands::control(cli.matrix.as_deref(), c),
    };
    match result {
        Ok(code) => code.into(),
        Err(e) => {
            eprintln!("hrr-harness: {e}");
            e.exit().into()
        }
    }
}
