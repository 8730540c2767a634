"""Manipulation: seed 003's 3-DOF arm with its suction end effector, dynamics and
contacts in MuJoCo (docs/arm.md).

``arm.py``: geometry (closed-form IK / FK), the MJCF model, the feed-forward (eq. 4)
and PD joint controllers, the simulation core with the reaction wrench;
``suction.py``: the suction cup as a weld equality activated at run time;
``component.py``: the ``manipulation.arm`` component.
"""
