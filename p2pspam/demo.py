"""The fingerprint part of ``p2pspam demo``: built-in mail, its vectors and overlaps."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from p2pspam.fingerprint import canonical_body, get_scheme
from p2pspam.samples import DEMO_MESSAGES


def fingerprint_demo(console: Console | None = None, thres: int = 3) -> list[list[int]]:
    """Fingerprint the built-in messages, print their pairwise feature overlaps, and
    return the overlap matrix."""
    console = console or Console()
    scheme = get_scheme("ata")
    names = [name for name, _, _ in DEMO_MESSAGES]
    vectors = scheme.vectors([canonical_body(raw) for _, _, raw in DEMO_MESSAGES])
    console.rule(f"ATA fingerprints (L={scheme.params['L']}, N={scheme.params['N']})")
    table = Table("message", "chars", "guid", "features")
    for name, vector in zip(names, vectors, strict=True):
        table.add_row(
            name,
            str(vector.chars),
            vector.guid.hex()[:12],
            " ".join(f"{f:016x}"[:6] for f in vector.features),
        )
    console.print(table)
    matrix = [[a.overlap(b) for b in vectors] for a in vectors]
    overlaps = Table(title=f"shared features (a match needs THRES = {thres} of 10)")
    overlaps.add_column("")
    for name in names:
        overlaps.add_column(name.split(":")[0] + "\n" + name.split(": ")[1], justify="right")
    for name, row in zip(names, matrix, strict=True):
        cells = [
            f"[bold green]{v}[/]" if v >= thres and i != j else str(v)
            for j, v in enumerate(row)
            for i in [names.index(name)]
        ]
        overlaps.add_row(name, *cells)
    console.print(overlaps)
    original = vectors[0]
    for name, vector in zip(names[1:], vectors[1:], strict=True):
        shared = original.overlap(vector)
        verdict = "MATCH -> filed as spam" if shared >= thres else "no match"
        console.print(f"  {name:32} shares {shared:2d}/10 with the marked original: {verdict}")
    return matrix
