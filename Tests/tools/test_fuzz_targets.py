"""scripts/fuzz.sh --replay fails when the target list comes back empty, short or different from the folders of
Fuzz/corpus, or when a target did not replay every seed; a stub `bridge-fuzz` plays the binary, in a copy of the
script's surroundings (the script finds everything relative to its own path)."""
from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]

# --list prints "$STUB_LIST" (each name in bridge-fuzz's format); a replay answers as the debug build does, counting
# the files it was given, less $STUB_MISSING.
STUB = """#!/usr/bin/env bash
if [[ "$1" == --list ]]; then
    echo "usage: bridge-fuzz TARGET [libFuzzer flags and corpus directories | input files]"
    echo "targets:"
    for name in $STUB_LIST; do echo "  $name: a target"; done
    exit 0
fi
target="$1"
shift
echo "$target: $(($# - ${STUB_MISSING:-0})) inputs replayed, every invariant held"
"""


@pytest.fixture
def replay(tmp_path: Path):
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPOSITORY / "scripts" / "fuzz.sh", tmp_path / "scripts" / "fuzz.sh")
    (tmp_path / "scripts" / "test-floors").write_text("floor fuzz-targets 2\n")
    for target in ("alpha", "beta"):
        seeds = tmp_path / "Fuzz" / "corpus" / target
        seeds.mkdir(parents=True)
        for name in ("one", "two"):
            (seeds / name).write_text(name)
    binary = tmp_path / ".build" / "debug" / "bridge-fuzz"
    binary.parent.mkdir(parents=True)
    binary.write_text(STUB)
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)

    def run(listed: str, missing: int = 0) -> subprocess.CompletedProcess[str]:
        environment = {"PATH": "/usr/bin:/bin", "STUB_LIST": listed, "STUB_MISSING": str(missing)}
        return subprocess.run([str(tmp_path / "scripts" / "fuzz.sh"), "--replay"], env=environment,
                              capture_output=True, text=True, timeout=60)

    return run


def test_every_target_listed_and_every_seed_replayed_passes(replay):
    result = replay("alpha beta")
    assert result.returncode == 0, result.stderr
    assert "alpha: 2 seeds replayed" in result.stderr and "beta: 2 seeds replayed" in result.stderr


def test_a_list_that_came_back_empty_fails(replay):
    # What a change of --list's format looks like to the script: no target at all.
    result = replay("")
    assert result.returncode != 0
    assert "other targets than the folders of Fuzz/corpus" in result.stderr


def test_a_target_missing_from_the_list_fails(replay):
    assert replay("alpha").returncode != 0


def test_a_target_without_a_corpus_folder_fails(replay):
    assert replay("alpha beta gamma").returncode != 0


def test_a_list_below_the_floor_fails(replay, tmp_path):
    (tmp_path / "scripts" / "test-floors").write_text("floor fuzz-targets 3\n")
    result = replay("alpha beta")
    assert result.returncode != 0
    assert "fewer than the floor of 3" in result.stderr


def test_a_seed_not_replayed_fails(replay):
    result = replay("alpha beta", missing=1)
    assert result.returncode == 1
    assert "alpha replayed 1 of its 2 seeds" in result.stderr
