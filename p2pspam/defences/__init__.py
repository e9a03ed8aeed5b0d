"""Boilerplate defences and the decision pipeline shared by the agent, the peer and the
replay simulator (pure: no sockets, files or clocks).

- ``strip``/``body``: normalisation that drops quoted replies, signatures and
  recognisable footers before fingerprinting;
- ``sketch``: the agent's counting sketch of windows seen in the user's own legitimate
  mail, whose frequent windows are never selected as features;
- ``network``: boilerplate discount by distinct GUIDs and by ham-voted GUIDs;
- ``pipeline``: canonical body -> defences -> ATA -> route with THRES -> votes -> policy.

The defaults below were chosen by measurement on ``simulations/mailgen.py`` corpora
(``docs/quality.md``); the agent and the peer must use the same values.
"""

from __future__ import annotations

DEFAULT_THRES = 3
DEFAULT_STRIP_QUOTES = True
DEFAULT_STRIP_SIGNATURES = True
DEFAULT_STRIP_FOOTERS = True
DEFAULT_SKETCH = True
DEFAULT_SKETCH_THRESHOLD = 2  # a window seen in this many legitimate messages is excluded
# A vote must not carry text the voter has seen in legitimate mail even once: the window
# sketch excludes windows seen this many times from the vectors of the user's votes.
DEFAULT_VOTE_SKETCH_THRESHOLD = 1
DEFAULT_MAX_GUIDS = 64  # feature objects with more distinct GUIDs do not count
DEFAULT_HAM_GUIDS = 1  # feature objects holding this many ham-decided GUIDs do not count
DEFAULT_RECORD_TTL_MS = 90 * 86_400_000
