"""Experiments of ``p2pspam sim`` (one module each, with ``register``)."""
