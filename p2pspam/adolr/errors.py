"""The domain error of the approximate-DOLR layer."""

from p2pspam.errors import P2PSpamError


class RecordError(P2PSpamError):
    """A record (feature entry, feature object, object record, pointer) is malformed:
    wrong type, size or range, or bytes that are not a valid encoding of it."""
