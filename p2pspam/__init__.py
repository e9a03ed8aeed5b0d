"""p2pspam: a peer-to-peer collaborative spam-fingerprint network.

The core package holds the pure layers (``fingerprint``, ``adolr``, ``auth``) and the
I/O layers built on them (``dht``, ``peer``). It never imports ``agent`` or
``simulations``.
"""

__version__ = "0.1.0"
