"""Run reports: the result model, its writers, and (later) baselines and comparison."""
