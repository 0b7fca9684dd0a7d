"""The third new-user walkthrough's wording: pydantic's "Input should be less than or equal to
10" for a court run with --rounds 50, click's "'plain' is not 'tmux'." for --display, config
paths counted from 0 ("agents.0.temperture") and bad plurals."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot import protocols
from moot.config.reading import annotation_of, bounds_of
from moot.protocols.definition import Flag
from tests.cli.test_cli import moot

THREE = ("--models", "scripted:@x", "--models", "scripted:@y", "--models", "scripted:@z")
ROUNDS_FLAG_MOST = 50  # what click takes for --rounds (cli/run.py); a protocol may take fewer


def _bounded() -> list[tuple[str, int, int]]:
    """(protocol, least, most) of each protocol whose --rounds option takes fewer than the flag,
    as its options model says."""
    found = []
    for name in protocols.names():
        record = protocols.get(name)
        option = record.flags.get(Flag.ROUNDS)
        if option is None:
            continue
        bounds = bounds_of(annotation_of(record.options, option))
        if bounds.get("le", ROUNDS_FLAG_MOST) < ROUNDS_FLAG_MOST:
            found.append((name, bounds["ge"], bounds["le"]))
    return found


@pytest.mark.parametrize(("protocol", "least", "most"), _bounded())
def test_too_many_rounds_for_a_protocol_says_what_it_takes(
    capsys: pytest.CaptureFixture[str], protocol: str, least: int, most: int
) -> None:
    asked = most + 1
    code, _, err = moot(
        capsys, "run", "q", *THREE, "--dry-run", "--protocol", protocol, "--rounds", str(asked)
    )
    assert code == 1
    said = (
        f"--rounds {asked}: {asked} is more than {most}; "
        f"the {protocol} protocol takes a whole number from {least} to {most}"
    )
    assert said in err, err
    assert "Input should be" not in err


def test_a_config_number_out_of_bounds_says_the_bounds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "moot.toml"
    config.write_text(
        '[[agents]]\nmodel = "scripted:@x"\ntemperature = 3\n[[agents]]\nmodel = "scripted:@y"\n'
    )
    code, out, err = moot(capsys, "validate", str(config))
    assert code == 1
    assert "temperature: 3 is more than 2; give a number from 0 to 2" in out + err, out + err
    assert "Input should be" not in out + err


def test_a_display_it_does_not_take_names_those_it_does_and_what_each_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """click said "'plain' is not 'tmux'.", naming no alternative."""
    code, _, err = moot(capsys, "run", "q", *THREE, "--display", "plain")
    assert code == 1
    flat = " ".join(err.split())
    assert "'plain' is not a display; --display takes tmux (also each CLI agent's output" in flat
    assert "Without --display a run shows the live view on a terminal and plain lines" in flat
    assert "is not 'tmux'" not in flat
