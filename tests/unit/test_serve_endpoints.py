"""`moonpool serve` warns when an unauthenticated endpoint is reachable from other machines."""

import pytest

from moonpool.components.serve import _leaves_loopback


@pytest.mark.parametrize("endpoint,leaves", [
    ("tcp://127.0.0.1:5555", False), ("tcp://127.0.0.2:5555", False), ("tcp://[::1]:5555", False),
    ("tcp://localhost:5555", False), ("ipc:///tmp/c.sock", False), ("inproc://x", False),
    ("tcp://*:5555", True), ("tcp://0.0.0.0:5555", True), ("tcp://10.0.0.2:5555", True),
])
def test_loopback_detection(endpoint, leaves):
    assert _leaves_loopback(endpoint) is leaves
