"""The network layer: the ``kademlia`` package extended with the approximate-DOLR RPCs.

- ``lookup``: the sans-IO iterative lookup shared by the peer and the simulator;
- ``wire``: the hardened datagram codec, argument checks and per-source token buckets;
- ``protocol``: the ``KademliaProtocol`` subclass (limits, validation, counted drops);
- ``messages``: the ADOLR RPC arguments and replies;
- ``node``: ``AdolrNode``, the client side (publish, route, naive baseline);
- ``handlers``: the serving side of the ADOLR RPCs;
- ``replication``: hand-off to new contacts, republication, expiry.
"""
