"""Reading the test vectors out of a scheme's spec document."""

import json
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs" / "schemes"


def spec_text(name: str) -> str:
    """Return the text of docs/schemes/NAME.md."""
    return (DOCS / f"{name}.md").read_text(encoding="utf-8")


def spec_vectors(name: str):
    """Return the JSON between the test-vector markers of docs/schemes/NAME.md."""
    block = re.search(
        r"<!-- test-vectors:begin -->\s*```json\n(.*?)```\s*<!-- test-vectors:end -->",
        spec_text(name),
        re.S,
    )
    assert block, f"docs/schemes/{name}.md has no test-vector block"
    return json.loads(block.group(1))
