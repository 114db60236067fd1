"""One plugin registry for every kind of plugin (evaluators, perturbators, question generators, hosts).

Each kind used to keep its own dict with its own rules, so one checked metadata at registration and another
did not, and a fix to one never reached the others. A ``Registry`` holds the rules once: a class is checked
by the kind's ``validate`` when it is registered (a ``ValueError`` naming the class otherwise), an id names
one class only, built-ins given as "module:Class" are imported (and checked) on first use so listing ids
imports no client library, and ids may be looked up without regard to case."""

from collections.abc import Callable
from importlib import import_module
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(
        self,
        kind: str,
        id_of: Callable[[type[T]], str],
        validate: Callable[[type[T]], object] = lambda cls: None,
        *,
        plural: str | None = None,
        builtins: dict[str, str] | None = None,
        id_name: str = "id",
        case_insensitive: bool = False,
    ) -> None:
        """``kind`` and ``plural`` ("known <plural>: ...") name the plugins in messages; ``id_name`` names what
        ``id_of`` returns. ``builtins`` ("id" -> "module:Class") is read, not copied, when an id is looked up."""
        self.kind, self.plural, self.id_name = kind, plural or f"{kind}s", id_name
        self.id_of, self.validate, self.case_insensitive = id_of, validate, case_insensitive
        self.builtins: dict[str, str] = builtins if builtins is not None else {}
        self.registered: dict[str, type[T]] = {}

    def _key(self, plugin_id: str) -> str:
        return plugin_id.lower() if self.case_insensitive else plugin_id

    def register(self, cls: type[T], *, expected_id: str | None = None) -> type[T]:
        """Add ``cls`` once ``validate`` accepts it; refuses an id already taken by another class."""
        self.validate(cls)
        key = self._key(self.id_of(cls))
        if expected_id is not None and key != expected_id:
            where = self.builtins[expected_id]
            raise ValueError(f"built-in {self.kind} {where} declares {self.id_name} {key!r}, not {expected_id!r}")
        if self.registered.get(key, cls) is not cls:
            raise ValueError(f"{self.kind} {key!r} is registered twice")
        self.registered[key] = cls
        return cls

    def ids(self) -> list[str]:
        return sorted(set(self.registered) | set(self.builtins))

    def get(self, plugin_id: str) -> type[T]:
        key = self._key(plugin_id)
        if key in self.registered:
            return self.registered[key]
        if key in self.builtins:
            module_name, class_name = self.builtins[key].split(":")
            return self.register(getattr(import_module(module_name), class_name), expected_id=key)
        raise ValueError(f"unknown {self.kind} {plugin_id!r}; known {self.plural}: {', '.join(self.ids())}")

    def classes(self) -> list[type[T]]:
        return [self.get(plugin_id) for plugin_id in self.ids()]
