"""What every experiment shares: the common options, CSV output, plots and tables."""

from __future__ import annotations

import argparse
import csv
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from p2pspam.errors import ParameterError

DEFAULT_OUT = "sim-out"


def add_common_options(parser: argparse.ArgumentParser, seed: int = 1) -> None:
    """Add ``--seed``, ``--out DIR`` and ``--quick`` to an experiment's parser."""
    parser.add_argument("--seed", type=int, default=seed, help="random seed (default %(default)s)")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"directory for the CSV and PNG (default {DEFAULT_OUT}/EXPERIMENT)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a small size that runs in seconds (for tests)"
    )


def experiment_parser(
    sub: argparse._SubParsersAction, name: str, doc: str, help: str
) -> argparse.ArgumentParser:
    """Add experiment ``name`` (described by the first paragraph of ``doc``) with the
    common options; the caller adds its own and sets ``func``."""
    parser = sub.add_parser(name, help=help, description=doc.split("\n\n")[0])
    add_common_options(parser)
    return parser


def save_figure(fig: Any, path: Path) -> Path:
    """Lay out, write (PNG) and close a matplotlib figure; return the path."""
    plt = pyplot()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def sized(value: int | None, quick: int, full: int, is_quick: bool) -> int:
    """An option's value when given (0 included, for validation to reject), else the
    quick or the full default."""
    if value is not None:
        return value
    return quick if is_quick else full


def out_dir(args: argparse.Namespace, name: str) -> Path:
    """Create and return the output directory of experiment ``name``."""
    path = args.out if args.out is not None else Path(DEFAULT_OUT) / name
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ParameterError(f"cannot create output directory {path}: {exc}") from exc
    return path


def write_csv(path: Path, rows: Sequence[Mapping[str, Any]]) -> Path:
    """Write dict rows (same keys) as a CSV file with a header; return the path."""
    if not rows:
        raise ValueError("no rows to write")
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(v) for k, v in row.items()})
    return path


def _cell(value: Any) -> Any:
    if isinstance(value, float):
        return f"{value:.6g}"
    return value


def read_csv(path: Path) -> list[dict[str, str]]:
    """Read a CSV written by :func:`write_csv` (values as strings)."""
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def pyplot():
    """Return ``matplotlib.pyplot`` with the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def print_table(
    title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], caption: str | None = None
) -> None:
    """Print a summary table (rich) to stdout."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, caption=caption)
    for col in columns:
        table.add_column(col, justify="right")
    for row in rows:
        table.add_row(*(_fmt(v) for v in row))
    Console(width=max(100, 14 * len(columns))).print(table)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if value == 0 or 1e-3 <= abs(value) < 1e5:
            return f"{value:.4f}".rstrip("0").rstrip(".") if value % 1 else f"{value:.0f}"
        return f"{value:.3g}"
    return str(value)


def announce(figure: str, files: Iterable[Path]) -> None:
    """Print which paper figure or table was reproduced and where the outputs are."""
    print(f"reproduces: {figure}")
    for f in files:
        print(f"wrote {f}")
