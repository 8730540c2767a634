"""SCHED_FIFO for real-time runs: whether this process may use it, and ZeroMQ's I/O
threads at the same priority.

libzmq applies ``ZMQ_THREAD_SCHED_POLICY`` / ``ZMQ_THREAD_PRIORITY`` when it starts a
context's I/O thread (with its first socket) and aborts the process if the kernel
refuses them, so they are set only after :func:`fifo_allowed` has tried the same
policy on the calling thread.
"""

from __future__ import annotations

import logging
import os

import zmq

log = logging.getLogger("moonpool.scheduling")


def fifo_allowed(priority: int) -> bool:
    """Whether this thread may run as SCHED_FIFO ``priority`` (tried, then undone)."""
    try:
        before = (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
        os.sched_setscheduler(0, before[0], os.sched_param(before[1]))
    except (OSError, AttributeError):  # EPERM; not Linux
        return False
    return True


def fifo_io_threads(ctx: zmq.Context, priority: int) -> bool:
    """Run ``ctx``'s I/O threads as SCHED_FIFO ``priority`` (effective if they have not
    started yet); False (and nothing set) where the kernel would refuse it."""
    if not fifo_allowed(priority):
        log.warning("real time: SCHED_FIFO %d is not allowed here (root, CAP_SYS_NICE or "
                    "`ulimit -r %d`): ZeroMQ's I/O threads run at normal priority",
                    priority, priority)
        return False
    ctx.set(zmq.THREAD_SCHED_POLICY, os.SCHED_FIFO)
    ctx.set(zmq.THREAD_PRIORITY, priority)
    return True


def fifo_thread(priority: int) -> bool:
    """Make the calling thread SCHED_FIFO ``priority``; False (warned) if refused."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, AttributeError) as exc:
        log.warning("real time: cannot run as SCHED_FIFO %d (%s); normal priority",
                    priority, exc)
        return False
    return True
