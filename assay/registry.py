"""One plugin registry for every kind of plugin (evaluators, perturbators, question generators, hosts).

Each kind used to keep its own dict with its own rules, so one checked metadata at registration and another
did not, and a fix to one never reached the others. A ``Registry`` holds the rules once: a class is checked
by the kind's ``validate`` when it is registered (a ``ValueError`` naming the class otherwise), an id names
one class only, built-ins given as "module:Class" are imported (and checked) on first use so listing ids
imports no client library, and ids may be looked up without regard to case.

Plugins of other packages come in through entry points (``entry_point_group``, e.g. "assay.evaluators"): each
names a class, and its name is the id the class must declare. They are loaded once, on the first listing or on
the first look-up of an id that is no built-in, and go through the same checks. A plugin that fails to import
or is refused is never fatal: it is kept as an ``UnavailablePlugin`` (package, entry point, error) for the
listings to show, as inspect_ai reports an outside plugin that fails to load."""

import threading
from collections.abc import Callable
from functools import cache
from importlib import import_module, metadata
from typing import Any, Generic, TypeVar

from assay.models.plugins import ASSAY_PACKAGE, PluginOrigin, UnavailablePlugin

T = TypeVar("T")


@cache
def assay_origin() -> PluginOrigin:
    """The origin of the built-ins: the installed Assay distribution."""
    try:
        version = metadata.version(ASSAY_PACKAGE)
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        version = None
    return PluginOrigin(package=ASSAY_PACKAGE, version=version)


def code_origin(cls: type) -> PluginOrigin:
    """The origin of a class registered in code rather than through an entry point: Assay for its own modules,
    otherwise the top-level package of the class's module (a notebook, a test double)."""
    top = cls.__module__.partition(".")[0]
    return assay_origin() if top == ASSAY_PACKAGE else PluginOrigin(package=top)


def entry_point_origin(entry_point: metadata.EntryPoint) -> PluginOrigin:
    """The distribution that declares ``entry_point``; a hand-made one may lack a name or a version."""
    distribution = entry_point.dist
    return PluginOrigin(
        package=(distribution.name if distribution is not None else None) or "unknown package",
        version=distribution.version if distribution is not None else None,
        entry_point=f"{entry_point.name} = {entry_point.value}",
    )


def discover(group: str, kind: str, add: Callable[[Any, str, PluginOrigin], object]) -> list[UnavailablePlugin]:
    """Load every entry point of ``group`` and hand what it names to ``add(plugin, entry point name, origin)``;
    returns, instead of raising, the ones that failed to import or that ``add`` refused."""
    unavailable = []
    for origin, entry_point in sorted(
        ((entry_point_origin(point), point) for point in metadata.entry_points(group=group)),
        key=lambda pair: (pair[0].package, pair[1].name),
    ):
        try:
            add(entry_point.load(), entry_point.name, origin)
        except Exception as error:  # a broken plugin of another package must not stop Assay
            unavailable.append(
                UnavailablePlugin(
                    kind=kind, id=entry_point.name, origin=origin, error=f"{type(error).__name__}: {error}"
                )
            )
    return unavailable


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
        base: type | None = None,
        entry_point_group: str | None = None,
    ) -> None:
        """``kind`` and ``plural`` ("known <plural>: ...") name the plugins in messages; ``id_name`` names what
        ``id_of`` returns. ``builtins`` ("id" -> "module:Class") is read, not copied, when an id is looked up.
        ``base``: the class every plugin must subclass (checked before ``validate``, which may then rely on it);
        ``entry_point_group``: where other packages declare plugins of this kind."""
        self.kind, self.plural, self.id_name = kind, plural or f"{kind}s", id_name
        self.id_of, self.validate, self.case_insensitive, self.base = id_of, validate, case_insensitive, base
        self.builtins: dict[str, str] = builtins if builtins is not None else {}
        self.registered: dict[str, type[T]] = {}
        self.entry_point_group = entry_point_group
        self._origins: dict[str, PluginOrigin] = {}
        self._unavailable: list[UnavailablePlugin] = []
        self._discovered = entry_point_group is None
        self._discovering = threading.RLock()

    def _key(self, plugin_id: str) -> str:
        return plugin_id.lower() if self.case_insensitive else plugin_id

    def register(self, cls: type[T], *, expected_id: str | None = None) -> type[T]:
        """Add ``cls`` once ``validate`` accepts it; refuses an id already taken by another class."""
        return self._add(cls, expected_id, None)

    def _add(self, cls: Any, expected_id: str | None, origin: PluginOrigin | None) -> type[T]:
        """``expected_id``: the id the built-in table (``origin`` None) or the entry point gives the class."""
        if self.base is not None and not (isinstance(cls, type) and issubclass(cls, self.base)):
            raise TypeError(f"{self.kind} {cls!r} is not a subclass of {self.base.__module__}.{self.base.__qualname__}")
        self.validate(cls)
        key = self._key(self.id_of(cls))
        if expected_id is not None and key != expected_id:
            if origin is None:
                where = f"built-in {self.kind} {self.builtins[expected_id]}"
            else:
                where = f"{self.kind} plugin '{origin.entry_point}' of package {origin.package}"
            raise ValueError(f"{where} declares {self.id_name} {key!r}, not {expected_id!r}")
        if origin is not None and key in self.builtins:
            self.get(key)  # a plugin may not take a built-in's id: load the built-in, the check below refuses it
        if self.registered.get(key, cls) is not cls:
            taken = f" (by {self.origin(key).label})" if origin is not None else ""
            raise ValueError(f"{self.kind} {key!r} is registered twice{taken}")
        if origin is not None and code_origin(cls) != assay_origin():  # also a class its module registered itself
            self._origins[key] = origin
        self.registered[key] = cls
        return cls

    def _discover(self) -> None:
        """Register the entry points' plugins, once. Other threads wait until they are all in; the thread that
        loads them returns at once if a plugin module lists this kind while it is imported."""
        with self._discovering:
            if self._discovered:
                return
            self._discovered = True
            assert self.entry_point_group is not None
            self._unavailable = discover(
                self.entry_point_group, self.kind, lambda cls, name, origin: self._add(cls, self._key(name), origin)
            )

    def ids(self) -> list[str]:
        self._discover()
        return sorted(set(self.registered) | set(self.builtins))

    def get(self, plugin_id: str) -> type[T]:
        key = self._key(plugin_id)
        if key not in self.registered and key not in self.builtins:
            self._discover()
        if key in self.registered:
            return self.registered[key]
        if key in self.builtins:
            module_name, class_name = self.builtins[key].split(":")
            return self.register(getattr(import_module(module_name), class_name), expected_id=key)
        broken = next((plugin for plugin in self._unavailable if self._key(plugin.id) == key), None)
        if broken is not None:
            raise ValueError(
                f"{self.kind} {plugin_id!r} of package {broken.origin.label} is unavailable: {broken.error}"
            )
        raise ValueError(f"unknown {self.kind} {plugin_id!r}; known {self.plural}: {', '.join(self.ids())}")

    def classes(self) -> list[type[T]]:
        return [self.get(plugin_id) for plugin_id in self.ids()]

    def origin(self, plugin_id: str) -> PluginOrigin:
        """Where the plugin registered as ``plugin_id`` comes from (loading it if it is a built-in)."""
        cls = self.get(plugin_id)
        return self._origins.get(self._key(plugin_id)) or code_origin(cls)

    def unavailable(self) -> list[UnavailablePlugin]:
        """The installed plugins of this kind that failed to import or to register, with the reason."""
        self._discover()
        return list(self._unavailable)
