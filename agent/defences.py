"""The agent-side boilerplate defences of ``p2pspam.defences``, applied to real mail.

Every message is fingerprinted from its defended body (quoted replies, signatures and
recognisable footers dropped: ``p2pspam.defences.body.defended_body``), and under the
ATA scheme the windows the user keeps seeing in their own legitimate mail are never
selected: those counted ``sketch_threshold`` times in the user's window sketch for a
check, those counted ``vote_sketch_threshold`` times for a spam vote (the rule of
``p2pspam.defences.pipeline.Fingerprinter``, which the replay simulator measures).

The sketch is a file of counters (``WindowSketch.to_bytes``: no text, no checksum list)
in the state directory, learned from mail the user keeps (``agent learn``, the IMAP
watcher, ``agent unmark``). One-message processes read it with the numpy-free
``SketchView``; bulk commands with numpy.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from p2pspam.defences import (
    DEFAULT_SKETCH,
    DEFAULT_SKETCH_THRESHOLD,
    DEFAULT_STRIP_FOOTERS,
    DEFAULT_STRIP_QUOTES,
    DEFAULT_STRIP_SIGNATURES,
    DEFAULT_VOTE_SKETCH_THRESHOLD,
)

SKETCH_FILE = "window-sketch.bin"
DEFAULT_SKETCH_WIDTH_BITS = 17  # 3 rows x 2^17 one-byte counters: a 384 KiB file


class DefenceSettings(NamedTuple):
    """The ``[agent.defences]`` table."""

    quotes: bool = DEFAULT_STRIP_QUOTES
    signatures: bool = DEFAULT_STRIP_SIGNATURES
    footers: bool = DEFAULT_STRIP_FOOTERS
    sketch: bool = DEFAULT_SKETCH
    sketch_file: Path | None = None  # None: SKETCH_FILE in the state directory
    sketch_threshold: int = DEFAULT_SKETCH_THRESHOLD
    vote_sketch_threshold: int = DEFAULT_VOTE_SKETCH_THRESHOLD
    sketch_width_bits: int = DEFAULT_SKETCH_WIDTH_BITS

    @property
    def sketch_bytes(self) -> int:
        """The size bound of the sketch file (header included)."""
        from p2pspam.defences.sketch import DEFAULT_DEPTH

        return (DEFAULT_DEPTH << self.sketch_width_bits) + 72


def sketch_path(config: Any) -> Path:
    """Where the user's window sketch is kept."""
    return config.defences.sketch_file or config.state_dir / SKETCH_FILE


def bodies(raws: Sequence[bytes], settings: DefenceSettings) -> list[Any]:
    """The canonical bodies of raw messages after the enabled normalisation defences."""
    from p2pspam.defences.body import defended_body
    from p2pspam.defences.strip import StripOptions

    options = StripOptions(settings.quotes, settings.signatures, settings.footers)
    return [defended_body(raw, options) for raw in raws]


def takes_exclusion(scheme: Any) -> bool:
    """Whether a scheme's vectors can leave sketch windows out (ATA can)."""
    from p2pspam.fingerprint.ata_params import SCHEME_NAME

    return getattr(scheme, "name", None) == SCHEME_NAME


class Exclusions(NamedTuple):
    """The sketch's exclusion predicates (None: exclude nothing) for ATA windows of
    ``length`` characters."""

    check: Any = None
    vote: Any = None
    length: int = 0

    def applies(self, scheme: Any) -> bool:
        """Whether these predicates are about ``scheme``'s windows."""
        return takes_exclusion(scheme) and scheme.length == self.length


def sketch_length(config: Any) -> int:
    """The window length the sketch counts: L of the first configured ATA scheme."""
    from p2pspam.fingerprint.ata_params import DEFAULT_LENGTH, SCHEME_NAME

    for setting in config.schemes:
        if setting.name == SCHEME_NAME:
            return int(setting.params.get("length", DEFAULT_LENGTH))
    return DEFAULT_LENGTH


NO_EXCLUSIONS = Exclusions()


def load_exclusions(config: Any, *, pure: bool | None = None) -> Exclusions:
    """The check and vote predicates of the user's saved sketch; none when the sketch is
    disabled or nothing was learned yet. ``pure`` (default: when numpy is not loaded)
    reads it without numpy, for one message."""
    settings = config.defences
    if not settings.sketch:
        return NO_EXCLUSIONS
    try:
        data = sketch_path(config).read_bytes()
    except FileNotFoundError:
        return NO_EXCLUSIONS
    except OSError as exc:
        from p2pspam.errors import InputError

        raise InputError(f"cannot read window sketch: {exc.strerror or exc}") from None
    if pure is None:
        pure = "numpy" not in sys.modules
    if pure:
        from p2pspam.defences.sketch import SketchView

        view: Any = SketchView(data)
    else:
        from p2pspam.defences.sketch import WindowSketch

        view = WindowSketch.from_bytes(data)
    return Exclusions(
        view.excluder(settings.sketch_threshold),
        view.excluder(settings.vote_sketch_threshold),
        view.length,
    )


def _new_sketch(config: Any) -> Any:
    from p2pspam.defences.sketch import WindowSketch

    settings = config.defences
    return WindowSketch(
        settings.sketch_threshold,
        width_bits=settings.sketch_width_bits,
        length=sketch_length(config),
    )


def load_sketch(config: Any) -> Any:
    """The user's ``WindowSketch`` (a new, empty one when none is saved); refuses a saved
    sketch of another size than the configured one."""
    from p2pspam.defences.sketch import WindowSketch
    from p2pspam.errors import ParameterError

    path = sketch_path(config)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return _new_sketch(config)
    except OSError as exc:
        from p2pspam.errors import InputError

        raise InputError(f"cannot read window sketch {path}: {exc.strerror or exc}") from None
    sketch = WindowSketch.from_bytes(data)
    if sketch.width_bits != config.defences.sketch_width_bits:
        raise ParameterError(
            f"{path} has sketch_width_bits={sketch.width_bits}, the config says "
            f"{config.defences.sketch_width_bits}: remove the file to change its size"
        )
    return sketch


def save_sketch(config: Any, sketch: Any) -> None:
    """Write the sketch atomically (a temporary file, renamed)."""
    import os

    from p2pspam.errors import InputError

    path = sketch_path(config)
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(sketch.to_bytes())
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"cannot write window sketch {path}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def sketch_state(config: Any) -> Iterator[Any]:
    """Load the user's sketch under an exclusive lock, yield it, save it back (so
    ``agent learn``, ``unmark`` and the IMAP watcher can run at the same time)."""
    import fcntl

    from p2pspam.errors import InputError

    path = sketch_path(config)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = path.with_name(path.name + ".lock").open("a")
    except OSError as exc:
        raise InputError(f"cannot lock window sketch {path}: {exc.strerror or exc}") from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        sketch = load_sketch(config)
        yield sketch
        save_sketch(config, sketch)


def learn_texts(sketch: Any, texts: Sequence[str]) -> int:
    """Count the windows of legitimate canonical texts; return how many had text."""
    learned = 0
    for text in texts:
        if text:
            sketch.learn(text)
            learned += 1
    return learned


def learn_messages(config: Any, raws: Sequence[bytes]) -> int:
    """Teach the user's saved sketch the windows of messages they keep; return how many
    messages had text to learn (0 and no file when the sketch is disabled)."""
    if not config.defences.sketch or not raws:
        return 0
    texts = [b.text for b in bodies(raws, config.defences)]
    with sketch_state(config) as sketch:
        return learn_texts(sketch, texts)
