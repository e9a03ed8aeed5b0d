"""Subcommands of ``p2pspam agent`` (one module each, with ``register``)."""
