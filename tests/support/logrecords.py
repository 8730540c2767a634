"""The log records a piece of code leaves, for tests that check what is said."""

from __future__ import annotations

import logging
from collections.abc import Callable


def warnings_of(logger_name: str, run: Callable[[], object]) -> list[str]:
    """The messages (WARNING and above) ``logger_name`` logs while ``run()`` runs. The
    logger is enabled at WARNING for the while: earlier tests in the process may have
    raised its level, or disabled it (a library's logging.config.dictConfig disables
    the loggers that exist when it runs)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger(logger_name)
    level, disabled = logger.level, logger.disabled
    logger.setLevel(logging.WARNING)
    logger.disabled = False
    logger.addHandler(handler)
    try:
        run()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.disabled = disabled
    return [r.getMessage() for r in records]
