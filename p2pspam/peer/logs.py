"""Structured logs: one JSON object per line on stderr (time, level, logger, message and
any ``extra`` fields), easy to read in ``journalctl`` and to parse."""

from __future__ import annotations

import json
import logging
import sys
import time

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """Format a log record as one JSON line."""

    def format(self, record: logging.LogRecord) -> str:
        """Return the JSON line of ``record``."""
        doc = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                doc[key] = value
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return json.dumps(doc, default=str)


def setup_logging(level: str = "info") -> None:
    """Send every log record to stderr as JSON lines at ``level``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # the stock kademlia/rpcudp modules log every datagram at info/debug
    for noisy in ("kademlia", "rpcudp"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
