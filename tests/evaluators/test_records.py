"""Structured evidence read as statements that keep their key path; false, null and zero values are features
the record says are absent."""

import json

from assay.evaluators._records import contradicted, evidence_text, read_record

RECORD = json.dumps({
    "name": "Luigi's", "state": "CA",
    "attributes": {"RestaurantsDelivery": "False", "RestaurantsTakeOut": "True", "WiFi": "u'free'", "HasTV": False,
                   "Parking": None, "Reviews": 0},
    "hours": {"Monday": "16:0-21:0"},
    "reviews": [{"author": "Ann", "stars": 5, "text": "Great pizza"}, {"author": "Bo", "stars": 2}],
})  # fmt: skip


def test_a_record_becomes_statements_that_keep_key_paths_and_who_said_what() -> None:
    record = read_record(RECORD)
    assert record is not None
    assert record.statements == (
        "name: Luigi's", "state: CA",
        "attributes restaurants delivery: no", "attributes restaurants take out: yes", "attributes wifi: free",
        "attributes has tv: no", "attributes parking: not stated", "attributes reviews: 0",
        "hours monday: 16:0-21:0",
        "reviews 1: author Ann, stars 5, text Great pizza", "reviews 2: author Bo, stars 2",
    )  # fmt: skip
    assert [item.path for item in record.absent] == [
        "attributes restaurants delivery", "attributes has tv", "attributes parking", "attributes reviews"
    ]  # fmt: skip


def test_an_absent_feature_contradicts_a_claim_of_it_but_not_its_negation() -> None:
    absent = read_record(RECORD).absent
    delivery = 'attributes restaurants delivery = "False"'
    assert contradicted("Luigi's offers delivery.", absent, frozenset()) == (delivery,)
    assert contradicted("Luigi's has a TV.", absent, frozenset()) == ("attributes has tv = false",)
    assert contradicted("Luigi's does not offer delivery.", absent, frozenset()) == ()
    assert contradicted("Luigi's has no TV.", absent, frozenset()) == ()
    assert contradicted("Luigi's offers free wifi.", absent, frozenset()) == ()
    assert contradicted("Luigi's offers delivery.", absent, frozenset({"delivery"})) == ()  # said elsewhere


def test_csv_rows_and_prose() -> None:
    record = read_record("name,delivery,stars\nLuigi,False,4\nMario,True,3")
    assert record is not None and record.statements == ("Luigi: delivery no, stars 4", "Mario: delivery yes, stars 3")
    assert [item.path for item in record.absent] == ["Luigi delivery"]
    prose = "Plain prose.\nMore prose, with commas, here."
    assert read_record(prose) is None and evidence_text(prose) == prose
    assert read_record("[1, 2") is None and read_record("{}") is None
    assert read_record("[" * 5000 + "]" * 5000) is None  # too deep for json: read as text, never a crash
