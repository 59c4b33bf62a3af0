//! Model vs measurement: alpha and beta from a ping-pong sweep, predictions from D01's formulas,
//! and the scale boundaries of this module.

pub fn scale_boundaries() -> Vec<lab_core::Boundary> {
    Vec::new()
}
