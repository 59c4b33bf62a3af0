//! The root package holds no code: its `tests/` check the whole course.
