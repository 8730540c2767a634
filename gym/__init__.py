"""``moonpool.gym``: Gymnasium environments over moonpool rigs (docs/gym.md).

Call order::

    import gymnasium, moonpool.gym                      # registers the environments
    env = gymnasium.make("moonpool/StationKeeping-v0")  # or TrajectoryTracking-v0
    env = moonpool.gym.RigEnv(rig, action="controller.wrench", observations=[...],
                              reward=fn)                # any rig

The environment drives an execution (``moonpool.orchestrator.external``), so this
package sits above the orchestrator: it imports the orchestrator and the SDK, and
nothing imports it.
"""

from gymnasium.envs.registration import register, registry

from .env import RigEnv, Task
from .tasks import StationKeepingTask, TrajectoryTrackingTask

ENVIRONMENTS = {
    "moonpool/StationKeeping-v0": "moonpool.gym.tasks:make_station_keeping",
    "moonpool/TrajectoryTracking-v0": "moonpool.gym.tasks:make_trajectory_tracking",
}
for _id, _entry in ENVIRONMENTS.items():
    if _id not in registry:
        register(id=_id, entry_point=_entry, disable_env_checker=False)

__all__ = ["RigEnv", "Task", "StationKeepingTask", "TrajectoryTrackingTask", "ENVIRONMENTS"]
