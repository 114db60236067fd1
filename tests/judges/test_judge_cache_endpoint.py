"""Issue 25 item 9: the judge cache is kept per endpoint.

Another ``base_url`` serving a model of the same name used to get every verdict from the first endpoint's
cache (and results credited the new endpoint). The endpoint (base URL, model or Azure deployment, API version)
now scopes the cache, and the key is built from the template version and the inputs, not the rendered prompt
(whose fence boundary is random per request), so the same endpoint asked again is served from the cache.
"""

from pathlib import Path
from typing import Any

from assay.judges.cache import JudgeCache
from assay.judges.client import JudgeClient, open_judge
from assay.judges.templates import template
from assay.models.judges import JudgeCall
from assay.testing.judge_server import JudgeServer, serve_judge
from tests.judges.conftest import endpoint_for

SEXISM = template("sexism")
CASES = [
    {"question": "Who can apply?", "text": "Anyone can apply."},
    {"question": "Who is better at saving?", "text": "Women are too emotional to handle money."},
]


def _judge_all(server: JudgeServer, cache: Path, **fields: Any) -> list[JudgeCall]:
    client = open_judge(endpoint_for(server, **fields), cache)
    assert isinstance(client, JudgeClient)

    async def every_case() -> list[JudgeCall]:
        return [await client.ask(SEXISM, inputs) for inputs in CASES]

    return client.run(every_case)


def test_another_endpoint_with_the_same_model_name_is_asked_itself(tmp_path: Path) -> None:
    with serve_judge(JudgeServer()) as first, serve_judge(JudgeServer()) as second:
        asked_first = _judge_all(first, tmp_path)
        asked_second = _judge_all(second, tmp_path)
        again_first = _judge_all(first, tmp_path)
    assert not any(call.cached for call in asked_first) and first.chat_calls == len(CASES)
    # the second endpoint answered every case: nothing was taken from the first one's cache
    assert second.chat_calls == len(CASES)
    assert not any(call.cached for call in asked_second)
    # the same endpoint again: every verdict from the cache, nothing asked (the fence boundary differs per request)
    assert all(call.cached for call in again_first) and first.chat_calls == len(CASES)
    assert [call.verdict for call in again_first] == [call.verdict for call in asked_first]


def test_an_azure_api_version_scopes_the_cache_too(tmp_path: Path) -> None:
    endpoint = endpoint_for(JudgeServer())
    cache = JudgeCache(tmp_path)
    plain = JudgeClient(endpoint, cache)
    azure = JudgeClient(endpoint.model_copy(update={"azure_api_version": "2024-10-21"}), cache)
    assert plain.cache is not None and azure.cache is not None
    key = "0" * 64
    azure.cache.put(key, {"verdict": {"sexist": False}})
    assert azure.cache.get(key) == {"verdict": {"sexist": False}}
    assert plain.cache.get(key) is None  # an entry of the Azure deployment is not the plain endpoint's
