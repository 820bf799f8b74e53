//! What becomes of measurements: the live table ([`terminal`]),
//! comparisons ([`compare`]), the single-file report ([`report`]), chart images ([`plot`]) and the
//! local results browser ([`view`]), the last three with the viewer's build that [`dist`] embeds.

pub(crate) mod compare;
pub(crate) mod compare_doc;
pub(crate) mod dist;
pub(crate) mod history;
pub(crate) mod html_table;
pub(crate) mod plot;
pub mod report;
pub(crate) mod table;
pub(crate) mod terminal;
pub mod view;
