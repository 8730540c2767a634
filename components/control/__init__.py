"""Vehicle controllers: the world-frame 4-DOF PID and a CasADi NMPC on the Fossen model."""
