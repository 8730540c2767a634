"""Guidance and task contracts: T1 station keeping and T2 trajectory tracking (seed 001)."""
