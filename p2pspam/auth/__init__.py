"""Identities and votes (pure): the central authority's credentials, signed votes, their
verification, per-message tallies and the decision policy. No I/O layer is imported here;
the clock is always passed in as ``now_ms``.

Modules: ``credentials`` (user credentials, ``load_user_key``), ``authority`` (the
authority's directory of files), ``votes`` (the canonical vote record, ``sign_vote``,
``decode_vote``), ``verify`` (``VoteVerifier``, ``VoteRejected``, ``VoteRateLimiter``),
``revocation`` (signed revocation lists), ``shapes`` (per-scheme vector checks),
``tally`` (one live vote per user), ``policy`` (spam / ham / unknown), ``peers`` (peer
credentials for a closed federation).
"""
