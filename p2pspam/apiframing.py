"""Framing of the agent API stream, shared by the peer (server) and the agent (client).

Each message is one msgpack map written to a TCP stream; the reader frames messages with
a streaming ``msgpack.Unpacker`` whose limits refuse anything over ``MAX_FRAME``. This
module imports only msgpack, so one-message agent processes stay fast.
"""

from __future__ import annotations

import msgpack

MAX_FRAME = 1 << 20  # the agreed per-message limit (1 MiB)


def new_unpacker() -> msgpack.Unpacker:
    """Return a stream decoder with the agreed limits."""
    return msgpack.Unpacker(
        raw=False,
        max_buffer_size=MAX_FRAME,
        max_str_len=MAX_FRAME,
        max_bin_len=MAX_FRAME,
        max_array_len=1 << 16,
        max_map_len=1 << 12,
        max_ext_len=0,
        strict_map_key=True,
    )
