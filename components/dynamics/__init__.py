"""Vehicle dynamics tools around the hydrodynamics FMU: ``calibration`` fits its Fossen
parameters per axis from single-axis trials (``moonpool calibrate hydro``, ``cli``)."""
