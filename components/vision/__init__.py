"""The deep-sea camera (docs/deepsea-camera.md): camera geometry on the world's ray
engine, underwater radiometry (water, lights), the sensor, the starfish detector and
the ``moonpool dataset deepsea`` command."""
