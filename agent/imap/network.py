"""What the IMAP watcher asks of the p2pspam network: a verdict, a vote (blocking)."""

from __future__ import annotations

from typing import Any

from agent.checking import build_schemes, check_blocking, fingerprint
from agent.verdicts import Verdict, make_policy
from agent.wire import AgentError


class PeerNetwork:
    """Checks and votes through the configured peers with the user's key."""

    def __init__(self, config: Any, user: Any, client: Any = None) -> None:
        from agent.runtime import make_blocking_client

        self.config = config
        self.user = user
        self.client = client or make_blocking_client(config)
        self.schemes = build_schemes(config)
        self.policy = make_policy(config.min_votes, config.ratio)

    def close(self) -> None:
        """Close the peer connection."""
        self.client.close()

    def guid(self, raw: bytes) -> bytes | None:
        """The message's GUID under the first scheme that gives it features (None when
        no scheme can fingerprint it)."""
        for vector in fingerprint([raw], self.schemes)[0]:
            if vector.features:
                return bytes(vector.guid)
        return None

    def check(self, raw: bytes) -> Verdict:
        """The network's verdict on a message (AgentError when no peer answers)."""
        return check_blocking(self.client, self.config, "imap", raw)

    def vote(self, raw: bytes, verdict: str, now_ms: int) -> int:
        """Sign and publish ``verdict`` on the message under every scheme; return how
        many votes were published (AgentError when a peer refuses or none answers)."""
        from p2pspam.auth.votes import sign_vote

        published = 0
        for vector in fingerprint([raw], self.schemes)[0]:
            if not vector.features:
                continue
            vote = sign_vote(self.user, vector, verdict, now_ms).encode()
            result = self.client.call("publish", {"vote": vote})
            if not isinstance(result, dict):
                raise AgentError("bad_reply", "publish reply is not a map")
            published += 1
        return published
