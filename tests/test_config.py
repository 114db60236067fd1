from pathlib import Path

import pytest

from assay.config import load_settings


def test_defaults_live_under_the_assay_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path))
    settings = load_settings()
    assert settings.store.backend == "local"
    assert settings.store_path == tmp_path / "store"
    assert settings.cache_path == tmp_path / "cache"
    assert settings.prefect_home_path == tmp_path / "prefect"


def test_environment_beats_toml(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    toml = tmp_path / "assay.toml"
    toml.write_text('embedding_model = "from-toml"\n[store]\nbackend = "s3"\nendpoint = "127.0.0.1:9000"\n')
    monkeypatch.setenv("ASSAY_CONFIG", str(toml))
    monkeypatch.setenv("ASSAY_STORE__ENDPOINT", "127.0.0.1:9999")
    settings = load_settings()
    assert settings.embedding_model == "from-toml"
    assert (settings.store.backend, settings.store.endpoint) == ("s3", "127.0.0.1:9999")


def test_secrets_never_show(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_STORE__SECRET_KEY", "s3cr3t-value")
    monkeypatch.setenv("ASSAY_JUDGE__API_KEY_ENV", "MY_JUDGE_KEY")
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-judge-value")
    settings = load_settings()
    assert settings.store.secret_key.get_secret_value() == "s3cr3t-value"
    assert settings.judge.api_key_env == "MY_JUDGE_KEY"
    for text in (repr(settings), str(settings.public_dump()), settings.model_dump_json()):
        assert "s3cr3t-value" not in text and "sk-judge-value" not in text


def test_a_judge_key_in_the_settings_is_refused_it_is_referenced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_JUDGE__API_KEY", "sk-judge-value")
    with pytest.raises(ValueError, match=r"judge\.api_key") as raised:
        load_settings()
    assert "sk-judge-value" not in str(raised.value)


def test_bad_settings_name_the_source(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    toml = tmp_path / "assay.toml"
    toml.write_text('[store]\nbackend = "ftp"\n')
    monkeypatch.setenv("ASSAY_CONFIG", str(toml))
    with pytest.raises(ValueError, match=r"assay\.toml.*store\.backend"):
        load_settings()


def test_the_home_is_one_per_user_whatever_the_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ASSAY_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    homes = set()
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        monkeypatch.chdir(tmp_path / folder)
        homes.add(load_settings().home)
    assert homes == {tmp_path / "user" / ".assay"}


def test_a_relative_home_is_fixed_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_HOME", "state")
    settings = load_settings()
    assert settings.home == tmp_path / "state" and settings.home.is_absolute()


def test_paths_in_assay_toml_are_read_from_its_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "assay.toml").write_text('home = ".assay"\ncache_dir = "caches"\n[store]\npath = "objects"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("ASSAY_HOME")
    monkeypatch.setenv("ASSAY_CONFIG", str(project / "assay.toml"))
    settings = load_settings()
    assert settings.home == project / ".assay"
    assert settings.cache_path == project / "caches"
    assert settings.store_path == project / "objects"


def test_a_judge_url_in_the_settings_is_checked_against_the_network_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_JUDGE__BASE_URL", "http://169.254.169.254/v1")
    with pytest.raises(ValueError, match=r"judge\.base_url: .*blocked network"):
        load_settings()
    monkeypatch.setenv("ASSAY_JUDGE__BASE_URL", "http://127.0.0.1:8000/v1")
    assert load_settings().judge.base_url == "http://127.0.0.1:8000/v1"
