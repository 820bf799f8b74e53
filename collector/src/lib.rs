//! `llmsweep`: the collector. It drives an OpenAI-compatible server with a closed-loop load,
//! timestamps every streamed chunk as its bytes arrive, and writes a self-describing bundle.
//!
//! Roles, one file each: [`cli`] (flags) → [`plan`] (validated plan) → [`session`] (probe,
//! calibration, warm-up) → [`sweep`] (points) → [`loadgen`] (the load loop) → [`client`] (one
//! request) → [`stream`] (SSE bytes → request record) → [`store`] (the bundle on disk), with
//! [`output`] for the terminal, [`telemetry`] for the server's metrics and the GPUs during a
//! point, and [`sim`] for the built-in simulated server. Bundles already written become a
//! comparison ([`compare`]), an HTML page ([`report`]), a chart image ([`plot`]) or a local
//! results browser ([`view`]), the last three with the viewer's code that [`dist`] and
//! `shared` carry; [`import`] turns other tools' results into bundles.

pub mod api;
pub mod app;
pub mod cli;
pub mod client;
pub mod compare;
pub mod dist;
pub mod host;
pub mod import;
pub mod loadgen;
pub mod output;
pub mod plan;
pub mod plot;
pub mod probe;
pub mod report;
pub mod session;
pub mod sim;
pub mod store;
pub mod stream;
pub mod sweep;
pub mod telemetry;
pub mod tokenize;
pub mod view;
pub mod workload;
