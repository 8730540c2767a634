"""Actuation: thruster models and thrust allocation (body wrench -> thruster forces)."""
