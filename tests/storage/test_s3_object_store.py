"""What only the S3 backend has to get right: server-side create-only writes, prefixes, errors."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from minio.error import S3Error

from assay.storage import ObjectExistsError, S3ObjectStore, StorageError
from assay.testing.seaweed import SeaweedServer

pytestmark = pytest.mark.slow


def test_server_refuses_create_only_put_even_without_the_stat_check(
    seaweed: SeaweedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = seaweed.object_store()
    store.put("k", b"first")
    # Simulate a writer that created "k" between our stat and our PUT: only If-None-Match can stop us now.
    monkeypatch.setattr(store, "_stat_exists", lambda key: False)

    with pytest.raises(ObjectExistsError) as caught:
        store.put("k", b"second")

    assert isinstance(caught.value.__cause__, S3Error)
    assert caught.value.__cause__.code == "PreconditionFailed"
    assert store.get("k") == b"first"


def test_content_type_is_stored(seaweed: SeaweedServer) -> None:
    store = seaweed.object_store()
    store.put("page.html", b"<p>", content_type="text/html")

    assert seaweed.client().stat_object(store.bucket, "page.html").content_type == "text/html"


def test_prefixes_isolate_stores_sharing_a_bucket(seaweed: SeaweedServer) -> None:
    first = seaweed.object_store(prefix="team-a")
    second = seaweed.object_store(bucket=first.bucket, prefix="/team-b/nested/")
    first.put("k", b"a")
    second.put("k", b"b")

    assert (first.get("k"), second.get("k")) == (b"a", b"b")
    assert first.list() == ["k"] and second.list() == ["k"]
    assert second.describe() == f"s3://{seaweed.endpoint}/{first.bucket}/team-b/nested"
    assert sorted(o.object_name for o in seaweed.client().list_objects(first.bucket, recursive=True)) == [
        "team-a/k",
        "team-b/nested/k",
    ]


def test_existing_bucket_is_reused(seaweed: SeaweedServer) -> None:
    first = seaweed.object_store()
    first.put("k", b"v")

    again = seaweed.object_store(bucket=first.bucket)

    assert again.get("k") == b"v"


def test_wrong_credentials_give_a_storage_error_without_the_secret(seaweed: SeaweedServer) -> None:
    wrong_secret = "wrong-secret-do-not-print"

    with pytest.raises(StorageError) as caught:
        S3ObjectStore(seaweed.endpoint, "some-bucket", seaweed.access_key, wrong_secret, secure=False)

    message = str(caught.value)
    assert seaweed.endpoint in message and "some-bucket" in message
    assert "SignatureDoesNotMatch" in message or "AccessDenied" in message
    assert wrong_secret not in message


def test_endpoint_url_scheme_decides_tls(seaweed: SeaweedServer) -> None:
    store = S3ObjectStore(
        f"http://{seaweed.endpoint}", "url-bucket", seaweed.access_key, seaweed.secret_key, secure=True
    )
    store.put("k", b"v")

    assert store.secure is False
    assert store.describe() == f"s3://{seaweed.endpoint}/url-bucket"


@pytest.mark.parametrize("endpoint", ["ftp://host:21", "http://host:9000/some/path", "https://user:pw@host"])
def test_malformed_endpoints_are_rejected_before_connecting(endpoint: str) -> None:
    with pytest.raises(ValueError, match="endpoint") as caught:
        S3ObjectStore(endpoint, "bucket", "key", "pw")
    assert "pw@" not in str(caught.value)


def test_stat_check_refuses_overwrite_on_servers_that_ignore_if_none_match(
    seaweed: SeaweedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = seaweed.object_store()
    store.put("k", b"first")
    upload = store._client._put_object

    def upload_ignoring_conditions(bucket: str, name: str, data: bytes, headers: dict[str, str]) -> object:
        headers = {key: value for key, value in headers.items() if key != "If-None-Match"}
        return upload(bucket, name, data, headers=headers)

    monkeypatch.setattr(store._client, "_put_object", upload_ignoring_conditions)

    with pytest.raises(ObjectExistsError, match="'k'"):
        store.put("k", b"second")
    assert store.get("k") == b"first"


def test_the_test_server_has_volumes_for_many_buckets(seaweed: SeaweedServer) -> None:
    """Each bucket takes volumes of its own; the suite makes hundreds, more than free disk / 1 GiB allows."""
    stores = [seaweed.object_store() for _ in range(60)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda store: store.put("k", b"v"), stores))

    assert [store.get("k") for store in stores] == [b"v"] * len(stores)
