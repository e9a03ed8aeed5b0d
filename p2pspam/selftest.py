"""The built-in self-test message, in the spirit of SpamAssassin's GTUBE.

Every peer answers a check of this message's vector as spam without any vote, so an agent
can test the whole path (mail parsing, fingerprinting, the peer API, the decision)
without marking anything. Its body contains no real mail.
"""

from __future__ import annotations

SELFTEST_BODY = (
    "XJS*P2PSPAM-SELFTEST-EMAIL*C.34X this is the p2pspam self-test message; every p2pspam "
    "peer reports it as spam without any vote so that user agents can check the whole "
    "path from mail to verdict. XJS*P2PSPAM-SELFTEST-EMAIL*C.34X"
)

SELFTEST_MESSAGE = (
    "From: p2pspam self-test <selftest@p2pspam.invalid>\n"
    "To: you@p2pspam.invalid\n"
    "Subject: p2pspam self-test\n"
    "Content-Type: text/plain; charset=us-ascii\n\n" + SELFTEST_BODY + "\n"
).encode("ascii")
