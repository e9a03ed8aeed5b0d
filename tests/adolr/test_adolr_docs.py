"""The example in docs/adolr.md runs as written."""

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "adolr.md"


def test_the_python_example_in_the_adolr_doc_runs():
    [example] = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    exec(compile(example, str(DOC), "exec"), {})
