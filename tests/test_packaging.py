"""The wheel carries rules, templates and samples inside the reviewer namespace,
under the distribution name chosen for the package index; the command stays `reviewer`."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# "reviewer" on the package index is an unrelated project (docs/github-action.md
# says how the name was checked); wheels spell the name with underscores.
DISTRIBUTION = "recovery-reviewer"
WHEEL_NAME = DISTRIBUTION.replace("-", "_")


def test_distribution_name_is_ours_and_the_command_stays_reviewer() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == DISTRIBUTION
    assert project["scripts"] == {"reviewer": "reviewer.cli:entry"}


def test_wheel_keeps_rules_templates_samples_inside_reviewer(tmp_path: Path) -> None:
    src = tmp_path / "src"
    # Not what other tests write into the checkout while this one copies it (hypothesis's database
    # and its temporary files, created and deleted by another worker mid-copy), nor generated benchmarks.
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__",
                                                            ".pytest_cache", ".hypothesis", ".work"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src)],
        check=True, capture_output=True,
    )
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    assert wheel.name.startswith(f"{WHEEL_NAME}-0.1.0-"), wheel.name
    names = set(zipfile.ZipFile(wheel).namelist())
    top_level = {n.split("/", 1)[0] for n in names}
    assert top_level == {"reviewer", f"{WHEEL_NAME}-0.1.0.dist-info"}, top_level
    assert "reviewer/publish/sticky.py" in names
    for module in sorted(p.name for p in (ROOT / "rules").glob("*.py")):
        assert f"reviewer/rules/{module}" in names
    assert "reviewer/templates/report.md.j2" in names
    for sample in (ROOT / "samples").glob("*/manifest.toml"):
        for f in sample.parent.rglob("*"):
            if f.is_file():
                assert f"reviewer/samples/{f.relative_to(ROOT / 'samples')}" in names
    entry_points = zipfile.ZipFile(wheel).read(f"{WHEEL_NAME}-0.1.0.dist-info/entry_points.txt").decode()
    assert "reviewer = reviewer.cli:entry" in entry_points
    metadata = zipfile.ZipFile(wheel).read(f"{WHEEL_NAME}-0.1.0.dist-info/METADATA").decode()
    assert f"\nName: {DISTRIBUTION}\n" in metadata
