//! The review panel planner for a classified pull request.
