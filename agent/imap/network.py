"""What the IMAP watcher asks of the p2pspam network: a verdict, a vote (blocking), and
the user's window sketch, learned from the mail they keep."""

from __future__ import annotations

from typing import Any

from agent.checking import build_schemes, check_blocking, fingerprint
from agent.defences import learn_messages, load_exclusions
from agent.verdicts import Verdict, check_args, make_policy
from agent.voting import rescue_vector, vote_vectors
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
        for vector in fingerprint([raw], self.schemes, self.config.defences)[0]:
            if vector.features:
                return bytes(vector.guid)
        return None

    def check(self, raw: bytes) -> Verdict:
        """The network's verdict on a message (AgentError when no peer answers)."""
        return check_blocking(self.client, self.config, "imap", raw, load_exclusions(self.config))

    def learn(self, raw: bytes) -> int:
        """Count the message's windows in the user's sketch as kept mail; return 1 when
        it had text to learn."""
        return learn_messages(self.config, [raw])

    def unlearn(self, raw: bytes) -> None:
        """Take a learned message back out of the sketch (the user judged it spam)."""
        from agent.defences import bodies, sketch_state

        if not self.config.defences.sketch:
            return
        text = bodies([raw], self.config.defences)[0].text
        if text:
            with sketch_state(self.config) as sketch:
                sketch.unlearn(text)

    def vote(self, raw: bytes, verdict: str, now_ms: int, *, rescue: bool = False) -> int:
        """Sign and publish ``verdict`` on the message under every scheme; return how many
        votes were published (AgentError when a peer refuses or none answers). With
        ``rescue`` a ham vote covers the boilerplate the message shares with the spam it
        matched (``agent.voting.rescue_vector``), as ``agent unmark`` does."""
        from p2pspam.auth.votes import sign_vote

        defences = self.config.defences
        exclusions = load_exclusions(self.config, pure=False)
        found, vectors = vote_vectors([raw], self.schemes, verdict, defences, exclusions)
        published = 0
        for runtime, vector in zip(self.schemes, vectors[0], strict=True):
            if not vector.features:
                continue
            if verdict == "ham" and rescue:
                reply = self.client.call("check", check_args(vector, runtime.thres, runtime.ttl))
                vector = rescue_vector(vector, found[0].text, runtime.scheme, reply, self.policy)
            vote = sign_vote(self.user, vector, verdict, now_ms).encode()
            result = self.client.call("publish", {"vote": vote})
            if not isinstance(result, dict):
                raise AgentError("bad_reply", "publish reply is not a map")
            published += 1
        return published
