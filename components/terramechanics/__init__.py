"""Terramechanics (Bekker–Wong) for tracked and wheeled seabed vehicles."""
