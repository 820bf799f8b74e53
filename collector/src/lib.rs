//! x

pub mod sim;
