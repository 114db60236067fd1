"""A killed run's flow run does not stay Running forever: the attempt that resumes the run marks it Crashed."""

from pathlib import Path

from assay.flows.attempts import SUPERSEDED, run_tag
from assay.flows.evaluate import evaluate_flow
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.states import Completed, Running

from assay.corpora import sample_data_path
from assay.models import TestSuite


@flow(name="evaluate")
def _killed_attempt() -> None:
    """Stands for the flow of a process that was killed: never run, only registered."""


def test_resuming_a_run_marks_its_unfinished_attempts_crashed(tmp_path: Path) -> None:
    suite = TestSuite.model_validate_json((sample_data_path() / "suite.json").read_text())
    suite.tests = suite.tests[:1]
    suite.tests[0].test_cases = suite.tests[0].test_cases[:2]
    suite_path = tmp_path / "suite.json"
    suite_path.write_text(suite.model_dump_json())
    with get_client(sync_client=True) as client:
        killed = client.create_flow_run(_killed_attempt, tags=[run_tag("resumed-run")], state=Running())
        finished = client.create_flow_run(_killed_attempt, tags=[run_tag("resumed-run")], state=Completed())
        other_run = client.create_flow_run(_killed_attempt, tags=[run_tag("another-run")], state=Running())

    state = evaluate_flow(
        out=str(tmp_path / "out"),
        suite=str(suite_path),
        evaluators=["text_matching"],
        run_id="resumed-run",
        return_state=True,
    )

    assert state.is_completed()
    with get_client(sync_client=True) as client:
        assert client.read_flow_run(killed.id).state.name == "Crashed"
        assert client.read_flow_run(killed.id).state.message == SUPERSEDED
        assert client.read_flow_run(finished.id).state.name == "Completed"
        assert client.read_flow_run(other_run.id).state.name == "Running"
        assert run_tag("resumed-run") in client.read_flow_run(state.state_details.flow_run_id).tags
