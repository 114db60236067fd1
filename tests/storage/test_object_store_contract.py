"""The behaviour every ObjectStore backend must share; runs against a local directory and SeaweedFS S3."""

import threading

import pytest

from assay.storage import ObjectExistsError, ObjectNotFoundError, ObjectStore, S3ObjectStore

BINARY = bytes(range(256)) * 3 + b"\x00\r\n\xff"
BAD_KEYS = ["", "/abs/key", "a/../b", "..", "a\\b", "a//b", "a/./b", "trailing/"]


def test_put_then_get_returns_the_same_bytes(object_store: ObjectStore) -> None:
    object_store.put("blobs/binary.bin", BINARY)
    object_store.put("empty", b"")

    assert object_store.get("blobs/binary.bin") == BINARY
    assert object_store.get("empty") == b""


def test_exists_tells_stored_from_missing_keys(object_store: ObjectStore) -> None:
    object_store.put("deep/nested/dirs/file.txt", b"x")

    assert object_store.exists("deep/nested/dirs/file.txt")
    assert not object_store.exists("deep/nested/dirs/other.txt")
    assert not object_store.exists("deep/nested")


def test_get_missing_key_names_key_and_store(object_store: ObjectStore) -> None:
    with pytest.raises(ObjectNotFoundError) as caught:
        object_store.get("missing/thing.json")

    assert "missing/thing.json" in str(caught.value)
    assert object_store.describe() in str(caught.value)


def test_put_refuses_to_overwrite_by_default(object_store: ObjectStore) -> None:
    object_store.put("k", b"first")

    with pytest.raises(ObjectExistsError, match="'k'"):
        object_store.put("k", b"second")
    assert object_store.get("k") == b"first"


def test_put_with_overwrite_replaces(object_store: ObjectStore) -> None:
    object_store.put("k", b"first")
    object_store.put("k", b"second, longer than the first", overwrite=True)
    object_store.put("fresh", b"new", overwrite=True)

    assert object_store.get("k") == b"second, longer than the first"
    assert object_store.get("fresh") == b"new"


def test_list_is_sorted_recursive_and_filters_by_string_prefix(object_store: ObjectStore) -> None:
    keys = ["c", "a/b/2", "ab/3", "a/1", "a/b/c/4"]
    for key in keys:
        object_store.put(key, key.encode())

    assert object_store.list() == sorted(keys)
    assert object_store.list("a/") == ["a/1", "a/b/2", "a/b/c/4"]
    assert object_store.list("a") == ["a/1", "a/b/2", "a/b/c/4", "ab/3"]
    assert object_store.list("a/b/c") == ["a/b/c/4"]
    assert object_store.list("zzz") == []
    assert object_store.list("no/such/dir/") == []


def test_delete_removes_the_object_only(object_store: ObjectStore) -> None:
    object_store.put("d/one", b"1")
    object_store.put("d/two", b"2")

    object_store.delete("d/one")

    assert not object_store.exists("d/one")
    assert object_store.list("d/") == ["d/two"]
    with pytest.raises(ObjectNotFoundError, match="d/one"):
        object_store.get("d/one")
    with pytest.raises(ObjectNotFoundError, match="d/one"):
        object_store.delete("d/one")


def test_deleted_key_can_be_created_again(object_store: ObjectStore) -> None:
    object_store.put("again", b"1")
    object_store.delete("again")
    object_store.put("again", b"2")

    assert object_store.get("again") == b"2"


@pytest.mark.parametrize("key", BAD_KEYS)
def test_invalid_keys_are_rejected_by_every_operation(object_store: ObjectStore, key: str) -> None:
    operations = [
        lambda: object_store.put(key, b"x"),
        lambda: object_store.get(key),
        lambda: object_store.exists(key),
        lambda: object_store.delete(key),
    ]
    for operation in operations:
        with pytest.raises(ValueError, match="invalid object key") as caught:
            operation()
        assert repr(key) in str(caught.value)
    assert object_store.list() == []


@pytest.mark.parametrize("prefix", ["/abs", "../up", "a\\b"])
def test_invalid_list_prefixes_are_rejected(object_store: ObjectStore, prefix: str) -> None:
    with pytest.raises(ValueError, match="invalid object key"):
        object_store.list(prefix)


def test_concurrent_creates_of_one_key_have_exactly_one_winner(object_store: ObjectStore) -> None:
    outcomes: dict[int, str] = {}
    start = threading.Barrier(8)

    def create(writer: int) -> None:
        start.wait()
        try:
            object_store.put("contended", f"writer {writer}".encode())
            outcomes[writer] = "won"
        except ObjectExistsError:
            outcomes[writer] = "refused"

    threads = [threading.Thread(target=create, args=(writer,)) for writer in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    winners = [writer for writer, outcome in outcomes.items() if outcome == "won"]
    assert len(outcomes) == 8
    assert len(winners) == 1
    assert object_store.get("contended") == f"writer {winners[0]}".encode()


def test_describe_names_the_location_without_credentials(
    object_store: ObjectStore, request: pytest.FixtureRequest
) -> None:
    description = object_store.describe()

    if isinstance(object_store, S3ObjectStore):
        assert description == f"s3://{object_store.endpoint}/{object_store.bucket}"
        secret = request.getfixturevalue("seaweed").secret_key
        assert secret not in description
        assert secret not in repr(object_store)
    else:
        assert description.startswith("file:///")
    assert description in repr(object_store)
