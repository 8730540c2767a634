"""The world the vehicles move in (docs/world.md): one static scene loaded from a
file (``scene.py``, read by ``scenefile.py``), the ray engine every geometric sensor
casts through (``rays.py``) and the water column (``environment.py``, TEOS-10)."""
