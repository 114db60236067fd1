"""The MRM workflow against a real Prefect server: every review pause (one form per step, more only when asked
for, one field per item) resumed through the API; refused answers re-open the form and the run goes on; a
second run in the same export folder pauses again and records its own decisions; a run killed mid-way resumes
on rerun without redoing work."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay.storage import ArtifactStore, LocalObjectStore
from assay.storage.run_artifacts import decision_artifact_name
from assay.testing.processes import small_corpus
from tests.support.prefect_server import PrefectServer, server_environment

FLOW_CALL = "import json, sys; from flows.mrm import mrm_workflow; mrm_workflow(**json.loads(sys.argv[1]))"
WAIT_S = 420


@pytest.fixture(scope="module")
def server(prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The worker's Prefect server, and a Prefect home of this module's own for the flow processes."""
    return prefect_server.api_url, tmp_path_factory.mktemp("prefect-home")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    return small_corpus(folder)


def start_flow(server: tuple[str, Path], assay_home: Path, **parameters: object) -> subprocess.Popen:
    api_url, prefect_home = server
    env = server_environment(prefect_home, api_url)
    env.update(
        {
            "ASSAY_HOME": str(assay_home),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TQDM_DISABLE": "1",
        }
    )
    base = {
        "evaluators": ["text_matching", "answer_semantic_similarity"],
        "test_generation": {"per_topic": 1},
        "calibration": {"answers_per_form": 4},
        "review": {"page_size": 4},
        "robustness": {"variation_perturbators": ["comma"], "adversarial_perturbators": ["base64"]},
    }
    log = open(assay_home / "flow.log", "ab")  # noqa: SIM115 - the child owns it
    return subprocess.Popen(
        [sys.executable, "-c", FLOW_CALL, json.dumps({**base, **parameters})],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=Path(__file__).parents[2],
    )


def wait_for(condition, process: subprocess.Popen, home: Path, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if process.poll() is not None and not condition():
            raise AssertionError(f"flow exited ({process.returncode}) before {what}:\n{_tail(home)}")
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"timed out waiting for {what}:\n{_tail(home)}")
        time.sleep(1)


def _tail(home: Path) -> str:
    return (home / "flow.log").read_text(errors="replace")[-4000:]


def paused_run(flow_name: str):  # type: ignore[no-untyped-def]
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateName

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(state=FlowRunFilterState(name=FlowRunFilterStateName(any_=["Paused"])))
        )
    return next((run for run in runs if run.parameters.get("name") == flow_name), None)


def form_of(run) -> dict:  # type: ignore[no-untyped-def]
    """The JSON schema of the form the paused run shows, and its description (what the reviewer reads)."""
    from prefect.client.orchestration import get_client

    keyset = run.state.state_details.run_input_keyset
    with get_client(sync_client=True) as client:
        schema = json.loads(client.read_flow_run_input(run.id, keyset["schema"]))
        description = json.loads(client.read_flow_run_input(run.id, keyset["description"]))
    return {"schema": schema, "description": description}


class Reviewer:
    """Answers each new pause of one flow run (by its ``name`` parameter) as ``answer(form)`` says."""

    def __init__(self, flow_name: str, process: subprocess.Popen, home: Path) -> None:
        self.flow_name, self.process, self.home = flow_name, process, home
        self.seen: set = set()
        self.forms: list[dict] = []

    def next_form(self):  # type: ignore[no-untyped-def]
        """The next pause's form, once Prefect has stored it: a run is Paused before its form's schema is
        written (``pause_flow_run`` proposes the state, then saves the input), so a read can meet a 404."""
        from prefect.exceptions import PrefectHTTPStatusError

        found: dict = {}

        def fresh() -> bool:
            run = paused_run(self.flow_name)
            if run is None or run.state.id in self.seen:
                return False
            try:
                found.update(form_of(run), run=run)
            except PrefectHTTPStatusError as error:
                if error.response.status_code != 404:
                    raise
                return False  # paused, its form not stored yet
            return True

        wait_for(fresh, self.process, self.home, f"pause {len(self.seen) + 1}")
        self.seen.add(found["run"].state.id)
        self.forms.append(found)
        return found


def answers(form: dict, reviewer: str = "ana") -> dict:
    """A person's choices: keep every topic, drop the first case shown, on the first calibration form (its first
    field asks whether the metric is meaningful: kept) pass the first answer, fail the second and ask for more of
    the same metric (the other answers keep the metric's verdict), name the first cluster."""
    step = form["schema"]["title"]
    properties = form["schema"]["properties"]
    fields = [name for name in properties if name.startswith("item_")]
    shown = {name: field["default"] for name, field in properties.items() if "default" in field}
    chosen: dict = {**shown, "reviewer": reviewer}  # the UI sends every field at its shown value
    if step == "TestValidationReview":
        chosen["item_1"] = "exclude"
    elif step == "CalibrationReview" and fields[0] == "item_1":
        chosen.update({fields[1]: "pass", **({fields[2]: "fail"} if len(fields) > 2 else {})})
        more = [choice for choice in properties["how"]["enum"] if "show me more" in choice]
        chosen.update({"how": more[0]} if more else {})
    elif step == "FailureClusteringReview":
        chosen["item_1"] = "fee questions"
    return chosen


@pytest.fixture(scope="module")
def answered() -> dict:
    """What the fully answered run left for the test that runs again in its folder: its folder and forms seen."""
    return {}


def test_every_review_pause_is_answered_and_refusals_reopen_the_form(  # type: ignore[no-untyped-def]
    server, corpus: Path, tmp_path: Path, answered: dict
) -> None:
    from prefect.flow_runs import resume_flow_run
    from prefect.settings import PREFECT_API_URL, temporary_settings

    out = tmp_path / "out"
    process = start_flow(server, tmp_path, out=str(out), corpus=str(corpus), interactive=True, name="paused")
    reviewer = Reviewer("paused", process, tmp_path)
    with temporary_settings({PREFECT_API_URL: server[0]}):
        form = reviewer.next_form()
        assert form["schema"]["title"] == "TopicModelingReview"
        assert "reviewer" in form["schema"]["required"]
        while form["schema"]["title"] == "TopicModelingReview":  # one form a page: the topic count is the model's
            resume_flow_run(form["run"].id, run_input=answers(form))
            form = reviewer.next_form()
        assert form["schema"]["title"] == "TestValidationReview"
        first_case = form["schema"]["properties"]["item_1"]["title"].split(". Case ", 1)[1].split(": ", 1)[0]
        with pytest.raises(Exception, match="exlude"):  # a mistyped choice: the server refuses it, still paused
            resume_flow_run(form["run"].id, run_input={**answers(form), "item_1": "exlude"})
        resume_flow_run(form["run"].id, run_input={**answers(form), "reviewer": "   "})  # blank name: refused
        again = reviewer.next_form()
        assert again["schema"]["title"] == "TestValidationReview"
        assert again["description"].startswith("**Not accepted, please correct:** reviewer: give your name")
        resume_flow_run(again["run"].id, run_input=answers(again))
        blank_cluster_name_sent = False
        while process.poll() is None:
            try:
                form = reviewer.next_form()
            except AssertionError:
                break  # the flow ended: no further pause
            if form["schema"]["title"] == "FailureClusteringReview" and not blank_cluster_name_sent:
                blank_cluster_name_sent = True  # a blank name is refused: the same form, the reason first
                resume_flow_run(form["run"].id, run_input={**answers(form), "item_1": "  "})
                form = reviewer.next_form()
                assert form["schema"]["title"] == "FailureClusteringReview"
                assert form["description"].startswith("**Not accepted, please correct:** names: give every cluster")
            resume_flow_run(form["run"].id, run_input=answers(form))
    assert process.wait(timeout=WAIT_S) == 0, _tail(tmp_path)
    titles = [form["schema"]["title"] for form in reviewer.forms]
    assert titles.count("TopicModelingReview") == 1  # one form a step; cases: refused once, so two
    assert titles.count("CalibrationReview") == 2  # the person asked for more once, so a second form
    calibration_forms = [f for f in reviewer.forms if f["schema"]["title"] == "CalibrationReview"]
    bulk = calibration_forms[0]["schema"]["properties"]["how"]["description"]
    assert "refitted when the metric has 6 labels" in bulk  # how many labels are needed, stated up front
    # every item field but the first form's "is this metric meaningful?"
    shown = sum(sum(name.startswith("item_") for name in f["schema"]["properties"]) for f in calibration_forms) - 1

    summary = json.loads((out / "workflow_summary.json").read_text())
    decisions = {d["step"]: d for d in summary["decisions"]}
    assert {step: (d["decided_by"], d["reviewer"], d["source"]) for step, d in decisions.items()} == dict.fromkeys(
        decisions, ("person", "ana", "prefect-ui")
    )
    assert all(d["run_id"] == summary["run_id"] and d["taken_on"] for d in decisions.values())
    assert blank_cluster_name_sent
    named = decisions["failure-clustering"]["decision"]
    assert all(name.strip() for name in named["names"].values()) and "fee questions" in named["names"].values()
    assert set(named["kept_proposed"]) == {key for key, name in named["names"].items() if name != "fee questions"}
    assert first_case in decisions["test-validation"]["decision"]["excluded_case_keys"]
    lab_keys = {
        row["test_case"]["key"]
        for row in json.loads((out / "automated-evaluation" / "test_lab.json").read_text())["rows"]
    }
    assert first_case not in lab_keys
    labels = json.loads((out / "calibration" / "labels.json").read_text())
    assert len(labels) == shown  # every shown answer starts at the verdict: a label, confirmed or changed
    assert {label["reviewer"] for label in labels} == {"ana"}
    record = decisions["calibration"]["review"]
    assert (record["how"], record["forms"], record["shown"]) == ("reviewed item by item", 2, shown + 1)
    assert len(record["changed"]) <= 2  # only the two answers set against the proposal can differ from it
    book = json.loads((out / "calibration" / "thresholds.json").read_text())
    assert (book["labels"], book["labels_changed"]) == (shown, len(record["changed"]))
    guardrails = json.loads((out / "artifacts" / "guardrails.json").read_text())
    assert guardrails["thresholds_reviewed_by"] == "ana (prefect-ui)"
    for name in ("corpus_patch.md", "system_prompt_extension.md", "guardrails.json"):
        assert (out / "artifacts" / name).exists()
    answered.update(home=tmp_path, out=out, seen=set(reviewer.seen), run_id=summary["run_id"])


def test_the_same_command_again_in_the_same_folder_is_a_new_run_that_asks_again(  # type: ignore[no-untyped-def]
    server, corpus: Path, answered: dict
) -> None:
    """It pauses again and records its own decisions, beside the first run's."""
    from prefect.flow_runs import resume_flow_run
    from prefect.settings import PREFECT_API_URL, temporary_settings

    if not answered:
        pytest.skip("needs the fully answered run of the test before, which did not complete")
    tmp_path, out, first_run = answered["home"], answered["out"], answered["run_id"]
    second = start_flow(server, tmp_path, out=str(out), corpus=str(corpus), interactive=True, name="paused")
    later = Reviewer("paused", second, tmp_path)
    later.seen = set(answered["seen"])
    with temporary_settings({PREFECT_API_URL: server[0]}):
        form = later.next_form()
        assert form["schema"]["title"] == "TopicModelingReview"
        while form["schema"]["title"] == "TopicModelingReview":
            resume_flow_run(form["run"].id, run_input=answers(form, reviewer="bo"))
            form = later.next_form()  # the next topic page, then the run's next review
    second.kill()
    second.wait()
    second_run = json.loads((out / "run.json").read_text())["run_id"]
    assert second_run != first_run
    stored = ArtifactStore(LocalObjectStore(tmp_path / "store"))
    mine = json.loads(stored.get(decision_artifact_name(second_run, "topic-modeling"))[1])
    assert (mine["reviewer"], mine["run_id"]) == ("bo", second_run)
    first = json.loads(stored.get(decision_artifact_name(first_run, "topic-modeling"))[1])
    assert first["reviewer"] == "ana"


def test_a_killed_run_resumes_without_redoing_finished_work(server, corpus: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    arguments = {"out": str(out), "corpus": str(corpus), "interactive": False, "name": "killed"}
    process = start_flow(server, tmp_path, **arguments)
    wait_for(lambda: (out / "calibration" / "review_items.json").exists(), process, tmp_path, "step 5")
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    run_id = json.loads((out / "run.json").read_text())["run_id"]
    assert json.loads((out / "run.json").read_text())["status"] == "running"
    shards = tmp_path / "store" / "runs" / run_id / "lab" / "sample-rag"
    answered = sorted(path.name for path in shards.iterdir())

    rerun = start_flow(server, tmp_path, **arguments)
    assert rerun.wait(timeout=WAIT_S) == 0, _tail(tmp_path)
    assert json.loads((out / "run.json").read_text()) | {"finished_at": None} == json.loads(
        (out / "run.json").read_text()
    ) | {"finished_at": None}
    summary = json.loads((out / "workflow_summary.json").read_text())
    assert summary["run_id"] == run_id
    assert sorted(path.name for path in shards.iterdir()) == answered  # the host was asked nothing again
    # served from the cache, so the time shown is the one it took when it was computed, in the first attempt
    first_attempt = json.loads((out / "topic-modeling" / "topics.json").read_text())
    assert first_attempt["topics"] and summary["steps"]["topic-modeling"]["wall_s"] > 0
    # the run is marked complete before its report is rendered, so the report reads it as completed
    report = (out / "interpretation.html").read_text(encoding="utf-8")
    assert '<strong class="run-status">completed</strong>' in report
