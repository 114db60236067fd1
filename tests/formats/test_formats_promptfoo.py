"""promptfoo test files (issue 36, item 4): copies of promptfoo's own examples (data/promptfoo/README.md names
each source) with every case, var and assertion checked by hand, plus one file of ours for the assertion types
those examples lack."""

from pathlib import Path

import pytest
from assay.evaluators.conditions import parse_condition

from assay.formats import FormatError, detect_format, read_file
from assay.models import Assertion, TestLab, TestSuite

PROMPTFOO = Path(__file__).parent / "data" / "promptfoo"


def _cases(suite: TestSuite | TestLab) -> list:
    assert isinstance(suite, TestSuite)
    return [case for _, case in suite.cases()]


def test_the_simple_test_config_maps_what_assay_checks_and_lists_the_rest() -> None:
    imported = read_file(PROMPTFOO / "simple-test_promptfooconfig.yaml")
    assert (imported.format, imported.detected) == ("promptfoo", True)
    assert imported.notes == [
        "assert type javascript not mapped",
        "assert type python not mapped",
        "assert type similar not mapped",
        "assert type llm-rubric not mapped",
    ]
    cases = _cases(imported.content)
    assert [case.prompt for case in cases] == [
        "Yes",  # YAML 1.2, as promptfoo reads it: not the boolean true
        "I'm hungry",
        "Output the story of your life in JSON",
        "Hello world",
        "The quick brown fox jumps over the lazy dog",
    ]
    assert [case.assertions for case in cases] == [
        [Assertion(type="EXACT_MATCH", targets=["Yarr"])],
        [Assertion(type="CONTAINS_ALL", targets=["grub"], ignore_case=True)],
        [],
        [],
        [Assertion(type="CONTAINS_ALL", targets=["arrr"], ignore_case=True)],  # the $ref'd assertion template
    ]
    assert [case.response_format for case in cases] == ["text", "text", "json", "text", "text"]
    assert all(case.variables == {"body": case.prompt} for case in cases)


def test_the_simple_test_csv() -> None:
    imported = read_file(PROMPTFOO / "simple-test_tests.csv")
    assert imported.notes == ["assert type javascript not mapped (2 records)"]
    cases = _cases(imported.content)
    assert [(case.prompt, case.response_format, case.assertions) for case in cases] == [
        ("Hello world", "text", []),
        ("I'm hungry", "text", []),
        ("Output the story of your life in json", "json", []),
    ]


def test_csv_metadata_columns_become_categories() -> None:
    imported = read_file(PROMPTFOO / "csv-metadata_tests.csv")
    assert imported.notes == ["assert type llm-rubric not mapped (3 records)"]
    cases = _cases(imported.content)
    assert [case.prompt for case in cases] == ["machine learning", "quantum physics", "climate change"]
    # promptfoo keeps what follows "contains:" as written, leading space included
    assert [case.assertions[0].targets for case in cases] == [[" algorithm"], [" quantum"], [" temperature"]]
    assert [case.categories for case in cases] == [
        ["category:technology", "tags:ai", "tags:data science", "tags:algorithms"],
        ["category:science", "tags:physics", "tags:advanced,theory", "tags:quantum"],
        ["category:environment", "tags:science", "tags:global,warming", "tags:research"],
    ]


def test_the_prompt_variable_is_named_when_vars_do_not_say() -> None:
    path = PROMPTFOO / "simple-csv_tests.csv"
    with pytest.raises(FormatError) as caught:
        read_file(path)
    assert str(caught.value) == (
        f"{path}: line 2: cannot tell which of vars ['body', 'language', 'style_config'] is the question (looked "
        "for question, query, input, prompt); name it with --prompt-var"
    )
    cases = _cases(read_file(path, prompt_var="body").content)
    assert [(case.prompt, case.variables["language"], case.assertions[0].targets) for case in cases] == [
        ("Hello world", "French", ["bonjour"]),
        ("I'm hungry", "French", ["faim"]),
        ("Hello world", "Pirate", ["Ahoy"]),
        ("I'm hungry", "Pirate", ["grub"]),
    ]
    assert cases[1].variables["style_config"] == '{"tone":"casual","length":"brief","formatting":{"bullets":true}}'
    assert all(case.assertions[0].ignore_case for case in cases)


def test_a_jsonl_tests_file() -> None:
    cases = _cases(read_file(PROMPTFOO / "jsonl-test-cases_cases.jsonl", prompt_var="text").content)
    assert [(case.prompt, case.variables["target_language"], case.assertions) for case in cases] == [
        ("Hello, world!", "French",
         [Assertion(type="EXACT_MATCH", targets=["Translate the following text to French: Hello, world!"])]),
        ("Hello, world!", "Spanish",
         [Assertion(type="EXACT_MATCH", targets=["Translate the following text to Spanish: Hello, world!"])]),
    ]  # fmt: skip
    assert len({case.key for case in cases}) == 2


OURS = """\
defaultTest:
  vars: {tone: plain}
  assert:
    - type: not-icontains
      value: as an AI
tests:
  - vars:
      question: Where is the {{tone}} "office"?
      city: [Paris, Oslo]
    assert:
      - type: regex
        value: '^[A-Z][a-z]+ has an? "?office'
      - type: not-regex
        value: '\\d{5}'
      - type: contains-any
        value: Paris, Oslo
      - type: not-contains-all
        value: [rain, snow]
      - type: starts-with
        value: "{{city}}"
      - type: latency
        threshold: 2500
      - type: cost
        threshold: 0.002
  - vars: {query: List three cities as JSON}
    options: {disableDefaultAsserts: true}
    providerOutput: '{"cities": ["Paris", "Oslo", "Rome"]}'
    assert:
      - type: is-json
        value: {type: object, required: [cities]}
      - type: contains
        value: Rome
        transform: output.toUpperCase()
      - type: equals
        value: {cities: []}
      - $ref: '#/assertionTemplates/missing'
"""


def test_our_file_covers_the_mapped_types_expansion_and_defaults(tmp_path: Path) -> None:
    path = tmp_path / "tests.yml"
    path.write_text(OURS)
    imported = read_file(path, model_key="bot")
    assert imported.notes == [
        "assert type contains not mapped (a transform)",
        'assert type equals not mapped (value {"cities": []})',
        "assert $ref #/assertionTemplates/missing not mapped (it points nowhere in the file)",
    ]
    lab = imported.content
    assert isinstance(lab, TestLab)  # the second test has a providerOutput
    paris, oslo, cities = (row.test_case for row in lab.rows)
    assert [paris.variables, oslo.variables] == [
        {"tone": "plain", "question": 'Where is the {{tone}} "office"?', "city": "Paris"},
        {"tone": "plain", "question": 'Where is the {{tone}} "office"?', "city": "Oslo"},
    ]
    assert paris.assertions == [
        Assertion(type="CONTAINS_ANY", targets=["Paris", "Oslo"]),
        Assertion(type="CONTAINS_ALL", targets=["rain", "snow"], negate=True),
        Assertion(type="STARTS_WITH", targets=["{{city}}"]),
        Assertion(type="LATENCY", threshold=2.5),
        Assertion(type="COST", threshold=0.002),
        Assertion(type="CONTAINS_ALL", targets=["as an AI"], negate=True, ignore_case=True),
    ]
    condition = parse_condition(paris.output_condition)
    assert condition.matches('Paris has an "office" downtown')
    assert not condition.matches("Paris has an office at 75001")
    assert not condition.matches("paris has an office")
    assert (cities.prompt, cities.response_format, cities.assertions) == ("List three cities as JSON", "json", [])
    assert cities.constraints == ['{"type": "object", "required": ["cities"]}']
    assert [row.actual_output for row in lab.rows] == [None, None, '{"cities": ["Paris", "Oslo", "Rome"]}']


@pytest.mark.parametrize(
    ("name", "text", "location", "message"),
    [
        (
            "c.yaml",
            "tests: file://tests.csv\n",
            "tests",
            "loads tests from 'file://tests.csv'; import that file itself",
        ),
        ("c.yaml", "tests:\n  - vars: [a]\n", "tests[0].vars", "expected an object"),
        ("c.yaml", "tests:\n  - vars: {question: q}\n    assert: contains\n", "tests[0].assert", "expected a list"),
        ("c.yaml", "tests:\n  - vars: {question: q\n", "line 3 column 1", "invalid YAML"),
        ("t.jsonl", '{"vars": {"topic": "x", "style": "y"}}\n', "line 1, vars", "cannot tell which of vars"),
    ],
)
def test_bad_files_name_line_and_field(tmp_path: Path, name: str, text: str, location: str, message: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(FormatError) as caught:
        read_file(tmp_path / name, "promptfoo")
    assert caught.value.location == location and caught.value.message.startswith(message)


def test_every_promptfoo_file_is_detected() -> None:
    assert {detect_format(path) for path in PROMPTFOO.iterdir() if path.suffix != ".md"} == {"promptfoo"}
