"""``assay evaluate --judge FILE`` end to end, as a user runs it: the sample suite against the sample RAG,
judged by the local rule-based judge; the rerun is served from the judge cache; the key never lands in an
output; and ``assay judges align`` compares the judge with a reviewer's labels."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.judges import NOT_CONFIGURED
from assay.testing.judge_server import JUDGE_MODEL, JudgeServer, serve_judge

runner = CliRunner()
SAMPLE_SUITE = Path(__file__).parents[2] / "assay" / "data" / "sample_bank" / "suite.json"
SECRET = "sk-judge-e2e-0123456789abcdef"


@pytest.fixture(scope="module")
def judge() -> Iterator[JudgeServer]:
    with serve_judge(JudgeServer()) as running:
        yield running


def _judge_file(tmp_path: Path, judge: JudgeServer) -> Path:
    path = tmp_path / "judge.json"
    path.write_text(json.dumps({
        "base_url": judge.url, "model": JUDGE_MODEL, "api_key_env": "ASSAY_E2E_JUDGE_KEY",
        "prices": {"*": {"input_per_1k": 0.5, "output_per_1k": 1.5}},
        "calls": {"concurrency": 8, "retries": 1, "backoff_s": 0.01},
    }))  # fmt: skip
    return path


def _evaluate(out: Path, *extra: str) -> str:
    result = runner.invoke(
        app, ["evaluate", "--suite", str(SAMPLE_SUITE), "--host", "sample-rag", "--out", str(out), *extra]
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_judged_run_keeps_evidence_and_cost_and_a_rerun_asks_the_judge_nothing(
    tmp_path: Path, judge: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_E2E_JUDGE_KEY", SECRET)
    judge_file = _judge_file(tmp_path, judge)
    before = judge.chat_calls
    output = _evaluate(tmp_path / "first", "--evaluators", "sexism", "--judge", str(judge_file))
    calls = judge.chat_calls - before
    assert calls >= 38 and f"judge {JUDGE_MODEL}: {calls} calls, 0 from cache" in output.replace("\n", " ")
    document = json.loads((tmp_path / "first" / "sexism" / "results.json").read_text())
    section = document["evaluator"]["judge"]
    assert section["templates"] == {"sexism": "1"} and section["endpoint"]["api_key_env"] == "ASSAY_E2E_JUDGE_KEY"
    assert section["account"]["calls"] == calls and section["account"]["cost"] > 0
    answered = [entry for entry in document["results"] if entry["actual_output"]]
    assert answered and all(entry["details"]["judge"][0]["raw_reply"] for entry in answered)
    summary = json.loads((tmp_path / "first" / "summary.json").read_text())
    assert summary["judge"]["total"]["calls"] == calls

    again = _evaluate(tmp_path / "second", "--evaluators", "sexism", "--judge", str(judge_file))
    assert judge.chat_calls - before == calls, "the rerun asked the judge again"
    assert f"judge {JUDGE_MODEL}: 0 calls, {calls} from cache" in again.replace("\n", " ")
    for path in [*tmp_path.rglob("*.json"), *tmp_path.rglob("*.md"), *tmp_path.rglob("*.html")]:
        assert SECRET not in path.read_text(errors="replace"), path


def test_without_a_judge_judged_evaluators_say_unavailable(tmp_path: Path) -> None:
    output = _evaluate(tmp_path / "named", "--evaluators", "sexism")
    document = json.loads((tmp_path / "named" / "sexism" / "results.json").read_text())
    assert {entry["unscored_reason"] for entry in document["results"]} <= {NOT_CONFIGURED} | {
        entry["unscored_reason"] for entry in document["results"] if not entry["actual_output"]
    }
    assert "unscored" in output


def test_a_bad_judge_file_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "judge.toml"
    path.write_text('base_url = "http://127.0.0.1:1/v1"\nmodel = "m"\ntemperature = "hot"\n')
    result = runner.invoke(app, ["evaluate", "--suite", str(SAMPLE_SUITE), "--judge", str(path), "--out",
                                 str(tmp_path / "o")])  # fmt: skip
    assert result.exit_code == 2 and "judge.toml" in result.output and "temperature" in result.output
    path.write_text('base_url = "http://127.0.0.1:1/v1"\napi_key = "sk-inline"\nmodel = "m"\n')
    result = runner.invoke(app, ["evaluate", "--suite", str(SAMPLE_SUITE), "--judge", str(path), "--out",
                                 str(tmp_path / "o")])  # fmt: skip
    assert result.exit_code == 2 and "api_key" in result.output and "sk-inline" not in result.output
    assert "value not shown" in result.output


def test_alignment_with_a_reviewers_labels(tmp_path: Path, judge: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_E2E_JUDGE_KEY", SECRET)
    _evaluate(tmp_path / "run", "--evaluators", "sexism", "--judge", str(_judge_file(tmp_path, judge)))
    document = json.loads((tmp_path / "run" / "sexism" / "results.json").read_text())
    scored = [entry for entry in document["results"] if entry["model_passes"] is not None]
    labels = tmp_path / "labels.csv"
    rows = ["test_case_key,model_key,label,reviewer"]
    for index, entry in enumerate(scored[:10]):  # the reviewer disagrees on every fifth case
        verdict = entry["model_passes"] == 1.0
        label = "pass" if verdict != (index % 5 == 4) else "fail"
        rows.append(f"{entry['test_case_key']},{entry['model_key']},{label},Dana Reviewer")
    rows.append(f"{scored[0]['test_case_key']},{scored[0]['model_key']},fail,policy")
    labels.write_text("\n".join(rows) + "\n")
    result = runner.invoke(app, ["judges", "align", "--results", str(tmp_path / "run"), "--labels", str(labels),
                                 "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["policy_labels_left_out"] == 1
    (sexism,) = report["alignment"]
    assert sexism["pairs"] == 10 and sexism["agreement"] == 0.8 and sexism["reviewers"] == ["Dana Reviewer"]
    bad = tmp_path / "bad.csv"
    bad.write_text("test_case_key,label\ncase-1,maybe\n")
    result = runner.invoke(app, ["judges", "align", "--results", str(tmp_path / "run"), "--labels", str(bad)])
    assert result.exit_code == 2 and "bad.csv: line 2" in result.output


def test_cascade_and_repeats_from_the_command_line(
    tmp_path: Path, judge: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_E2E_JUDGE_KEY", SECRET)
    judge_file = str(_judge_file(tmp_path, judge))
    output = _evaluate(tmp_path / "run", "--evaluators", "correctness", "--judge", judge_file,
                       "--judge-cascade", "--judge-band", "0.1", "--judge-repeats", "2")  # fmt: skip
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["judge"]["options"] | {"budget": None} == {"repeats": 2, "cascade": True, "band": 0.1,
                                                               "budget": None}  # fmt: skip
    section = summary["judge"]["evaluators"]["correctness"]
    cascade = section["cascade"]
    assert cascade["proxy"] == "answer_semantic_similarity" and cascade["decided_offline"] > 0
    assert section["account"]["saved_by_cascade"] == cascade["decided_offline"]
    assert "decided offline by the cascade" in output.replace("\n", " ")
    rows = json.loads((tmp_path / "run" / "correctness" / "results.json").read_text())["results"]
    judged = [row for row in rows if row.get("details", {}).get("judge")]
    assert len(judged) == cascade["sent_to_judge"]
    assert all(row["details"]["judge_repeats"]["repeats"] == 2 for row in judged if row["unscored_reason"] is None)
    offline = [row for row in rows if (row["unscored_reason"] or "").startswith("cascade: decided offline")]
    assert len(offline) == cascade["decided_offline"]
