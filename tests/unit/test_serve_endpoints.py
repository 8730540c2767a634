"""Which endpoints leave the loopback: `moonpool serve` refuses them without keys (or
with a loud warning under --insecure), and so does a rig."""

import pytest

from moonpool.components.sdk.security import leaves_loopback


@pytest.mark.parametrize("endpoint,leaves", [
    ("tcp://127.0.0.1:5555", False), ("tcp://127.0.0.2:5555", False), ("tcp://[::1]:5555", False),
    ("tcp://localhost:5555", False), ("ipc:///tmp/c.sock", False), ("inproc://x", False),
    ("tcp://127.0.0.1;10.0.0.2:5555", True), ("tcp://10.0.0.1;127.0.0.1:5555", False),
    ("tcp://camera-pc:5555", True), ("tcp://[fe80::1]:5555", True), ("tcp://*:5555", True), ("tcp://0.0.0.0:5555", True), ("tcp://10.0.0.2:5555", True),
])
def test_loopback_detection(endpoint, leaves):
    assert leaves_loopback(endpoint) is leaves
