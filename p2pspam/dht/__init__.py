"""The network layer: the ``kademlia`` package extended with the approximate-DOLR RPCs.

``lookup`` is the sans-IO iterative lookup shared by the peer and the simulator;
``wire`` holds the hardened datagram codec and argument validation; ``protocol`` the
``KademliaProtocol`` subclass; ``node`` the ADOLR operations on top of it.
"""
