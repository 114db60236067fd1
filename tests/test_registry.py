"""The generic plugin registry behind the evaluator, perturbator, question generator and host registries."""

import pytest

from assay.registry import Registry


class Plugin:
    id = "plain"


class Other(Plugin):
    id = "other"


class Twin(Plugin):
    """Declares the id of ``Plugin``."""


class Shouting(Plugin):
    id = "Shouting"


def _refuse_twins(cls: type[Plugin]) -> None:
    if cls.__doc__:
        raise ValueError(f"plugin {cls.__name__}: has a docstring")


def registry(**options: object) -> Registry[Plugin]:
    return Registry("plugin", lambda cls: cls.id, **options)  # type: ignore[arg-type]


def test_register_get_ids_and_classes() -> None:
    plugins = registry()
    assert plugins.register(Plugin) is Plugin and plugins.register(Other) is Other
    assert plugins.register(Plugin) is Plugin  # the same class again is harmless
    assert plugins.ids() == ["other", "plain"]
    assert plugins.get("plain") is Plugin and plugins.classes() == [Other, Plugin]


def test_an_id_taken_by_another_class_is_refused() -> None:
    plugins = registry()
    plugins.register(Plugin)
    with pytest.raises(ValueError, match=r"^plugin 'plain' is registered twice$"):
        plugins.register(Twin)
    assert plugins.get("plain") is Plugin


def test_an_unknown_id_names_the_known_ones_in_the_kinds_words() -> None:
    plugins = registry(plural="known things")
    plugins.register(Other)
    plugins.register(Plugin)
    with pytest.raises(ValueError, match=r"^unknown plugin 'nope'; known known things: other, plain$"):
        plugins.get("nope")
    with pytest.raises(ValueError, match=r"^unknown plugin 'x'; known plugins: $"):
        registry().get("x")


def test_validation_runs_at_registration_and_keeps_the_class_out() -> None:
    plugins = registry(validate=_refuse_twins)
    with pytest.raises(ValueError, match=r"^plugin Twin: has a docstring$"):
        plugins.register(Twin)
    assert plugins.ids() == [] and plugins.register(Plugin) is Plugin


def test_ids_may_ignore_case() -> None:
    plugins = registry(case_insensitive=True)
    plugins.register(Shouting)
    assert plugins.ids() == ["shouting"]
    assert plugins.get("SHOUTING") is Shouting and plugins.get("shouting") is Shouting
    with pytest.raises(ValueError, match="unknown plugin 'Shouting'"):
        registry().get("Shouting")


def test_built_ins_load_on_first_use_validated_and_under_their_own_id() -> None:
    builtins = {"plain": f"{__name__}:Plugin", "twin": f"{__name__}:Twin"}
    seen: list[type[Plugin]] = []
    plugins = registry(validate=seen.append, builtins=builtins, id_name="name")
    assert plugins.ids() == ["plain", "twin"] and seen == [] and plugins.registered == {}
    assert plugins.get("plain") is Plugin and seen == [Plugin] and plugins.registered == {"plain": Plugin}
    with pytest.raises(ValueError, match=rf"^built-in plugin {__name__}:Twin declares name 'plain', not 'twin'$"):
        plugins.get("twin")
    builtins["late"] = f"{__name__}:Other"  # the table is read when used, not copied
    assert plugins.ids() == ["late", "plain", "twin"]
    with pytest.raises(ValueError, match="declares name 'other', not 'late'"):
        plugins.classes()
