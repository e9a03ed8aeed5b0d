"""Domain exceptions. The CLI turns any of them into one line on stderr and exit code 2."""


class P2PSpamError(Exception):
    """Base class of every error the project raises on purpose."""


class InputError(P2PSpamError):
    """An input (file, mailbox, stdin, argument) cannot be read or is malformed."""


class ParameterError(P2PSpamError):
    """A parameter is out of its documented range."""
