"""A name decisions are credited to must be one a reader can see: every entry point that takes a person's name
(approvals file, review labels, baseline approvals, labels files) refuses names made of invisible characters."""

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from assay.baselines import Baselines
from assay.models.mrm import ReviewLabel
from assay.mrm.approvals import load_approvals
from assay.names import person_name
from assay.storage.local import LocalObjectStore
from assay.storage.runs import RunStates

INVISIBLE = [
    "\u200b",  # zero-width space
    "\u200b\u200c\u200d\u2060\ufeff",  # every zero-width character
    "\u2800",  # braille blank
    "\u3164",  # Hangul filler
    "\u115f\u1160",  # Hangul choseong and jungseong fillers
    "\uffa0",  # half-width Hangul filler
    "\x00",  # NUL
    " \u00a0\u2003 ",  # spaces of several widths
    "\u202e\u200f",  # direction overrides and marks
]


@pytest.mark.parametrize("name", INVISIBLE)
def test_invisible_names_are_no_names(name: str) -> None:
    assert person_name(name) == ""


@pytest.mark.parametrize(
    ("given", "recorded"),
    [("  Ana   Lima ", "Ana Lima"), ("A\u200bda", "Ada"), ("Grace\x00 Hopper", "Grace Hopper"), ("李 娜", "李 娜")],
)
def test_visible_names_are_kept_without_what_does_not_show(given: str, recorded: str) -> None:
    assert person_name(given) == recorded


@pytest.mark.parametrize("name", INVISIBLE)
def test_every_entry_point_refuses_an_invisible_name(name: str, tmp_path: Path) -> None:
    approvals = tmp_path / "approvals.json"
    approvals.write_text(json.dumps({"reviewer": name}))
    with pytest.raises(ValueError, match="invisible characters are not a name"):
        load_approvals(approvals)
    with pytest.raises(ValidationError, match="invisible characters are not a name"):
        ReviewLabel(item_id="groundedness/groundedness/m/c1", human_passes=True, reviewer=name)
    store = LocalObjectStore(tmp_path / "store")
    runs = RunStates(store)
    run_id = runs.finish(runs.start("a" * 64, workflow="evaluate")).run_id
    with pytest.raises(ValueError, match="name is required"):
        Baselines(store).approve("weekly", run_id, name)
