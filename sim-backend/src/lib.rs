//! latscope's device simulator: a deterministic discrete-event engine whose models emit
//! into the trace model. The engine and the calibrated scenarios arrive with their issue;
//! this crate exists now so the workspace has its final shape.
