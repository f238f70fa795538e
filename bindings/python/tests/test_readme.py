"""Every ```python block of the package README and of the repository README runs as it is
(each in a fresh directory and namespace), so the documented examples cannot rot."""

import re
from pathlib import Path

import pytest

HERE = Path(__file__).resolve()
README = HERE.parents[1] / "README.md"
ROOT = HERE.parents[3] / "README.md"


def blocks(text):
    return re.findall(r"```python\n(.*?)```", text, re.S)


BLOCKS = [(README, b) for b in blocks(README.read_text())] + [(ROOT, b) for b in blocks(ROOT.read_text())]


def test_both_readmes_have_examples():
    assert sum(r == README for r, _ in BLOCKS) >= 6 and sum(r == ROOT for r, _ in BLOCKS) >= 1


@pytest.mark.parametrize("where,code", BLOCKS, ids=[f"{w.parent.name}-{i}" for i, (w, _) in enumerate(BLOCKS)])
def test_readme_example_runs(where, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(where), "exec"), {"__name__": "readme"})
