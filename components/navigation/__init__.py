"""Inertial navigation: the error-state Kalman filter INS (``navigation.ins``,
docs/navigation.md)."""
