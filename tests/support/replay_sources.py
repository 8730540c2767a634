"""Components for the replay tests: a seeded 'camera' with image attachments and a
sparse second port, and a consumer whose output depends on every byte it received."""

from __future__ import annotations

import hashlib

import numpy as np

from moonpool.components import Attached, Component, Port
from moonpool.components.sdk.noise import KeyedNoise
from moonpool.v1 import common_pb2, signals_pb2, vision_pb2


class Camera(Component):
    """A 4x3 mono8 image per step (pixels from keyed noise: they change with the seed),
    one at initialize too; ``count`` every third step only."""

    outputs = (
        Port("image", vision_pb2.ImageHeader, attachment=True),
        Port("count", signals_pb2.Signals),
    )

    def configure(self, params):
        self.noise = KeyedNoise(self.seed, self.name)
        self.k = 0

    def _image(self, t_ns: int, index: int) -> Attached:
        rows = [self.noise.normal(index, f"row{r}", size=4) for r in range(3)]
        pixels = (np.abs(np.concatenate(rows)) * 60).astype(np.uint8)
        head = vision_pb2.ImageHeader(header=self.header(t_ns), width=4, height=3,
                                      encoding="mono8", step_bytes=4)
        return Attached(head, pixels.tobytes())

    def initialize(self, start_time_ns):
        return {"image": self._image(start_time_ns, 10**6)}

    def step(self, t_ns, dt_ns, inputs):
        out = {"image": self._image(t_ns, self.k)}
        if self.k % 3 == 0:
            m = signals_pb2.Signals(header=self.header(t_ns))
            m.signals.add(name="k", value=self.k)
            out["count"] = m
        self.k += 1
        return out


class Checksum(Component):
    """Hashes the image it holds (header and pixels) and counts the queued ``count``
    messages received since its last step."""

    inputs = (
        Port("image", vision_pb2.ImageHeader, attachment=True),
        Port("count", signals_pb2.Signals, queued=True),
    )
    outputs = (Port("sum", signals_pb2.Signals),)

    def step(self, t_ns, dt_ns, inputs):
        m = signals_pb2.Signals(header=common_pb2.Header(sim_time_ns=t_ns))
        image = inputs.get("image")
        if image is not None:
            h = hashlib.sha256(image.message.SerializeToString(deterministic=True))
            h.update(bytes(image.data))
            m.signals.add(name="image", value=int.from_bytes(h.digest()[:6], "little"))
            m.signals.add(name="image_t", value=image.message.header.sim_time_ns)
        m.signals.add(name="counts", value=len(inputs["count"]))
        m.signals.add(name="last", value=inputs["count"][-1].signals[0].value
                      if inputs["count"] else -1)
        return {"sum": m}


# The rig these components are for (``{algorithm}``: jacobi or gauss-seidel): the camera
# at 30 Hz with an offset, image attachments, an Initialize output and a sparse port;
# the checksum at 100 Hz holding the image through a 2 ms delay and queueing the sparse
# port; a queued probe every 7 ms (tests/integration/test_replay.py,
# test_group_local_routes.py).
RIG = """
[run]
until = "0.5s"
seed = 1
algorithm = "{algorithm}"

[components.camera]
entry = "replay_sources:Camera"
rate_hz = 30
offset = "5ms"

[components.check]
entry = "replay_sources:Checksum"
rate_hz = 100

[components.probe]
entry = "probes:QueueProbe"
period = "7ms"

[[connections]]
from = "camera.image"
to = "check.image"
delay = "2ms"

[[connections]]
from = "camera.count"
to = "check.count"

[[connections]]
from = "camera.count"
to = "probe.in"
"""
