from deployments.serve import build_deployment, parse_args


def test_revalidation_deployment_carries_schedule_and_parameters() -> None:
    args = parse_args(["--suite", "s.json", "--host", "sample-rag", "--host", "sample-rag-keyword",
                       "--out", "/tmp/reval", "--cron", "0 6 * * 1"])
    deployment = build_deployment(args)
    assert deployment.name == "revalidation"
    assert deployment.parameters == {
        "suite": "s.json",
        "hosts": ["sample-rag", "sample-rag-keyword"],
        "evaluators": ["answer_semantic_similarity", "text_matching"],
        "out": "/tmp/reval",
    }
    assert deployment.schedules[0].schedule.cron == "0 6 * * 1"
