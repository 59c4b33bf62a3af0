//! D05: a topology cost model. Fat-tree (folded Clos, rail-optimised), dragonfly and torus,
//! each built as an explicit graph ([`build`], measured by [`measure`]) and described by
//! closed forms ([`closed`]) that the tests check against the graphs and that the sweeps use
//! to a million endpoints and beyond. Collective times come from D01's formulas ([`model`]).

pub mod build;
pub mod cli;
pub mod closed;
pub mod draw;
pub mod graph;
pub mod measure;
pub mod model;
pub mod spec;
pub mod sweep;

/// D05's rows of the scale-boundary ladder (D06 consolidates them).
pub fn scale_boundaries() -> Vec<lab_core::Boundary> {
    sweep::scale_boundaries()
}
