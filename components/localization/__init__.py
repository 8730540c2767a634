"""Pool localization: overhead camera through a flat water surface, refraction-aware
AprilTag measurement, the navigation filter and the pool setup file."""
