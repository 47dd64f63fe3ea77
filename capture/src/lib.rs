//! libhrr_capture.so: loaded with LD_PRELOAD into an unmodified CUDA or HIP program, it
//! interposes the runtime's exported functions and records each call into an archive.
//!
//! Modules, lowest first (each uses only modules above it in this list; the
//! `module_graph` test keeps it so):
//! - `real`: calling the real function behind a shim (`real!`, `Real<F>`, the one
//!   result when it is missing);
//! - `ffi`: C types and reads of the program's memory;
//! - `crash`: fatal signals flush what is buffered (handed the flush by `state`), or
//!   leave it to the interrupted thread when that thread holds the buffer;
//! - `config`: the environment's settings, each checked (a bad one turns capture off);
//! - `alloc`: live device and pinned host allocations;
//! - `registry`: code objects, kernels and variables registration taught capture;
//! - `state`: the process's capture (writer, allocations, registry), the shim guard,
//!   fork (a child's writer opened on its first call), panic containment, the exit notice;
//! - `regions`, `params`: host regions of copies, and the pure decode and policy per
//!   parameter kind;
//! - `runtime_info`: runtime and device metadata for the manifest;
//! - `pending`: the pending reads' bookkeeping (pure); `events`: capture's own events;
//!   `reads`: the pending-read table and its waits; `reader`: the reader threads that
//!   record D2H copies' outputs once the copies completed; `outputs`: the hooks around a
//!   row (defer, the synchronisations' waits, exit, fork);
//! - `generic`: recording a table row; `shims`: the extern "C" functions generated from
//!   the API table;
//! - `pinned`: pinned-memory snapshots of a launch; `launch`: launches and the launch
//!   record; `register`: code-object registration; `modules`: the module API;
//!   `symbols`: copies to and from device variables; `unreplayable`: calls recorded as
//!   unreplayable.
//!
//! Every exported symbol is declared once, in `hrr_archive::api` (the table's rows and
//! `HAND_WRITTEN`); `tests/shims_exported.rs` checks the built library against it.
//!
//! Invariants: the program always gets the real function's return value; a Rust panic
//! never crosses a shim (it turns capture off and marks the archive incomplete); a shim
//! reached from inside capture (our own calls into the runtime) goes straight through.

#[macro_use]
pub mod real;

pub mod alloc;
pub mod config;
pub mod crash;
pub mod events;
pub mod ffi;
pub mod generic;
pub mod launch;
pub mod modules;
pub mod outputs;
pub mod params;
pub mod pending;
pub mod pinned;
pub mod reader;
pub mod reads;
pub mod regions;
pub mod register;
pub mod registry;
pub mod runtime_info;
pub mod shims;
pub mod state;
pub mod symbols;
pub mod unreplayable;
