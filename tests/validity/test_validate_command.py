"""``assay evaluators validate`` on a small labelled file whose figures are worked out by hand here, and on bad
files: exit status 2 and one line naming the file, the line and the field, never a traceback."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.apps.cli.validate import FILES

runner = CliRunner()
CONTEXT = "The fee is 25 pounds and payment is due within 30 days."

# id, answer, label; token precision = share of the answer's words found in CONTEXT (worked out by hand)
ROWS = [
    ("r1", "The fee is 25 pounds.", 1),  # the fee is 25 pounds: 5/5 = 1.0
    ("r2", "The fee is 40 pounds.", 1),  # 40 is not in the context: 4/5 = 0.8
    ("r3", "Payment is due within 30 weeks.", 1),  # weeks is not: 5/6 = 0.8333
    ("r4", "The fee is 99 euros.", 0),  # 99, euros are not: 3/5 = 0.6
    ("r5", "Email bob@example.com about the fee.", 0),  # email bob example com about the fee: 2/7 = 0.2857
    ("r6", "Nothing is due.", 0),  # nothing is due: 2/3 = 0.6667
    ("r7", "The fee is 25 pounds, write to ann@example.org.", 1),  # 5 of 10 words: 0.5
    ("r8", "", 1),  # empty answer: unscored by every score, never 0
]
TOKEN_PRECISION = {"r1": 1.0, "r2": 0.8, "r3": 5 / 6, "r4": 0.6, "r5": 2 / 7, "r6": 2 / 3, "r7": 0.5}
# pii_leakage's model_passes: 0 where the answer leaks an e-mail address (r5, r7), else 1
PII_PASSES = {"r1": 1.0, "r2": 1.0, "r3": 1.0, "r4": 1.0, "r5": 0.0, "r6": 1.0, "r7": 0.0}


def write_labels(path: Path) -> Path:
    group = {"r1": "fees", "r2": "fees", "r4": "fees", "r5": "fees"}
    record = {"question": "What is due?", "context": CONTEXT}
    lines = [
        json.dumps({**record, "id": key, "answer": answer, "label": label, "group": group.get(key, "dates")})
        for key, answer, label in ROWS
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_auc_matches_the_pairwise_count_by_hand(tmp_path: Path) -> None:
    labels = write_labels(tmp_path / "labels.jsonl")
    command = ["evaluators", "validate", "--labels", str(labels), "--evaluators", "pii_leakage"]
    result = runner.invoke(app, [*command, "--out", str(tmp_path / "v")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "v" / "validity.json").read_text())

    # Acceptable (label 1) scored rows: r1 r2 r3 r7; not acceptable: r4 r5 r6. 4 x 3 = 12 pairs, each won (1), tied
    # (1/2) or lost (0) by the acceptable answer. Token precision:
    #   r1 1.0    vs r4 0.6, r5 0.286, r6 0.667: won, won, won  = 3
    #   r2 0.8    vs the same:                 won, won, won  = 3
    #   r3 0.833  vs the same:                 won, won, won  = 3
    #   r7 0.5    vs the same:                 lost, won, lost = 1
    assert report["baselines"]["token_precision"]["token_precision"]["auc"] == pytest.approx(10 / 12, abs=1e-4)
    # pii_leakage model_passes (1 = no leak):
    #   r1 1 vs r4 1, r5 0, r6 1: tie, won, tie = 2;  r2 and r3 likewise = 2 each
    #   r7 0 vs r4 1, r5 0, r6 1: lost, tie, lost = 0.5
    pii = report["evaluators"]["pii_leakage"]["model_passes"]
    assert pii["auc"] == pytest.approx(6.5 / 12, abs=1e-4)
    assert pii["auc_low"] <= pii["auc"] <= pii["auc_high"]

    # At the default threshold 0.5, passing rows r1 r2 r3 r4 r6: 3 acceptable among 5 passing, 3 of 4 acceptable
    # found; right on r1 r2 r3 r5, wrong on r4 r6 r7: accuracy 4/7.
    assert pii["threshold"] == {"value": 0.5, "source": "default", "set_by": "evaluator default"}
    at = pii["at_threshold"]
    assert (at["accuracy"], at["precision"], at["recall"], at["passed"]) == (
        pytest.approx(4 / 7, abs=1e-4), pytest.approx(0.6), pytest.approx(0.75), 5
    )  # fmt: skip
    assert at["f1"] == pytest.approx(2 * 0.6 * 0.75 / 1.35, abs=1e-4)
    # group "fees" (r1 r2 r4 r5): pairs r1/r4 tie, r1/r5 won, r2/r4 tie, r2/r5 won = 3/4
    assert pii["groups"]["fees"]["auc"] == pytest.approx(0.75)
    # group "dates" (r3 r6 r7, r8 unscored): r3/r6 tie, r7/r6 lost = 0.5/2; right only on r3 at 0.5
    dates = {"n": 3, "n_unscored": 1, "auc": pytest.approx(0.25), "accuracy": pytest.approx(1 / 3, abs=1e-4)}
    assert pii["groups"]["dates"] == dates

    for figure in (pii, report["baselines"]["token_precision"]["token_precision"]):
        assert (figure["n"], figure["n_unscored"], figure["unscored_ids"]) == (7, 1, ["r8"])
    rows = [json.loads(line) for line in (tmp_path / "v" / "rows.jsonl").read_text().splitlines()]
    assert [row["id"] for row in rows] == [key for key, _, _ in ROWS]
    for row in rows[:-1]:
        assert row["baselines"]["token_precision"]["score"] == pytest.approx(TOKEN_PRECISION[row["id"]], abs=1e-5)
        assert row["evaluators"]["pii_leakage"]["scores"]["model_passes"] == PII_PASSES[row["id"]]
    assert rows[-1]["evaluators"]["pii_leakage"]["unscored_reason"] == "missing input: actual_output"
    assert rows[-1]["baselines"]["token_precision"] == {"score": None, "unscored_reason": "the answer has no words"}
    assert report["labels_sha256"] and report["rows"] == 8 and report["acceptable"] == 5
    assert "validity/labels/" in result.output and "0.542 [" in result.output
    listed = runner.invoke(app, ["artifacts", "list", "validity/labels/", "--json"])
    assert {item["name"] for item in json.loads(listed.stdout)} == {f"validity/labels/{name}" for name in FILES}


GOOD = '{"question": "q", "context": "c", "answer": "a", "label": 1}\n'
BAD_FILES = {
    "missing_label.jsonl": (
        GOOD + '{"question": "q", "context": "c", "answer": "a"}\n',
        "missing_label.jsonl: line 2, label: missing",
    ),
    "label_two.jsonl": (
        '{"question": "q", "context": "c", "answer": "a", "label": 2}\n',
        "label_two.jsonl: line 1, label: expected 1 (acceptable) or 0",
    ),
    "bad_json.jsonl": (
        GOOD * 2 + '{"question": "q" "answer": "a"}\n',
        "bad_json.jsonl: line 3 column 18: invalid JSON",
    ),
    "no_label_column.csv": (
        "question,context,answer\nq,c,a\n",
        "no_label_column.csv: line 1: the header lacks the column(s) label",
    ),
    "bad_context.csv": (
        'question,context,answer,label\nq,c,a,1\nq,"[""x"", 3]",a,0\n',
        "bad_context.csv: line 3, column context: expected a string or a list of strings",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_a_bad_file_is_one_line_naming_file_line_and_field(tmp_path: Path, name: str) -> None:
    content, expected = BAD_FILES[name]
    (tmp_path / name).write_text(content, encoding="utf-8")
    result = runner.invoke(
        app, ["evaluators", "validate", "--labels", str(tmp_path / name), "--out", str(tmp_path / "v")]
    )
    assert result.exit_code == 2, result.output
    assert expected in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert not (tmp_path / "v" / "validity.json").exists()


def test_the_installed_command_reports_a_bad_label_in_one_line(tmp_path: Path) -> None:
    """Through the real executable, as users call it."""
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"question": "q", "context": "c", "answer": "a", "label": "maybe"}\n', encoding="utf-8")
    assay = Path(sys.executable).parent / "assay"
    environment = {"ASSAY_WARM_WORKER": "off", "ASSAY_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [str(assay), "evaluators", "validate", "--labels", str(labels), "--out", str(tmp_path / "v")],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [f'error: {labels}: line 1, label: expected 1 (acceptable) or 0 '
                                                '(not acceptable), or true/false; got "maybe"']  # fmt: skip
