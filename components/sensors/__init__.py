"""Stochastic sensor models (docs/sensors.md).

Every sensor is two things: a pure, vectorised model (numpy arrays of truth in,
measurements out; usable offline) and a component wrapping it. Shared pieces live
in ``common.py`` (mount pose, rotations, latency, validity) and ``environment.py``
(the water density profile and pressure of the hydrodynamics FMU). The sensors on the
scene (altimeter, multibeam, CTD, LBL, ADCP, imaging sonar) share ``acoustic.py`` (the
scene or a flat seabed, the water column, beam fans) and ``sound_rays.py`` (harmonic-mean
travel times, circular-arc rays through a constant sound-speed gradient).
"""
