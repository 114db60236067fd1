"""Judge prompt templates: data files (``assay/judges/templates/*.toml``), versioned, validated when loaded.

A template file holds ``id`` (its file name), ``version``, ``description``, a ``system`` and a ``user``
message (Jinja2, every variable required), ``inputs`` (the variables it takes, checked against the text) and
``schema``, the JSON schema of the judge's reply. Inputs are wrapped in XML-like tags (``<answer>...</answer>``)
so the judge can tell instructions from data. The id and version of every template used are recorded in
``results.json``; a content hash goes into the cache key, so an edited template never reuses stale verdicts.
"""

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

TEMPLATES_DIR = Path(__file__).parent / "templates"
_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)


_SINGLE_BRACES = re.compile(r"(?<!\{)\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}(?!\})")


def single_brace_names(prompt: str) -> list[str]:
    """The ``{variable}`` references of a user's prompt (the manual's notation), in order."""
    return _SINGLE_BRACES.findall(prompt)


def double_braces(prompt: str) -> str:
    """A user's prompt with the manual's ``{variable}`` references written as Jinja's ``{{ variable }}``."""
    return _SINGLE_BRACES.sub(lambda match: "{{ " + match.group(1) + " }}", prompt)


class TemplateError(ValueError):
    """A template file or text that cannot be used, naming the file (or template id) and the field at fault."""


@dataclass(frozen=True)
class JudgeTemplate:
    id: str
    version: str
    description: str
    system: str
    user: str
    inputs: tuple[str, ...]
    schema: dict[str, Any]
    source: str = "built-in"
    digest: str = field(default="", compare=False)

    @classmethod
    def build(
        cls,
        *,
        id: str,
        version: str,
        description: str,
        system: str,
        user: str,
        inputs: list[str] | tuple[str, ...],
        schema: dict[str, Any],
        source: str = "built-in",
    ) -> "JudgeTemplate":
        """A validated template: the texts compile, their variables are exactly ``inputs``, the schema is valid."""
        where = f"judge template {id!r} ({source})"
        if not id or not str(version).strip():
            raise TemplateError(f"{where}: 'id' and 'version' are required")
        variables: set[str] = set()
        for name, text in (("system", system), ("user", user)):
            try:
                variables |= jinja2.meta.find_undeclared_variables(_ENV.parse(text))
            except jinja2.TemplateSyntaxError as error:
                raise TemplateError(f"{where}: field {name!r} line {error.lineno}: {error.message}") from None
        if variables != set(inputs):
            raise TemplateError(
                f"{where}: field 'inputs' lists {sorted(inputs)} but the texts use {sorted(variables)}"
            )
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise TemplateError(f"{where}: field 'schema' must be a JSON schema of type 'object'")
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as error:
            raise TemplateError(f"{where}: field 'schema' is not a valid JSON schema: {error.message}") from None
        schema = {"title": id, **schema}
        digest = hashlib.sha256(
            json.dumps([id, str(version), system, user, schema], sort_keys=True).encode()
        ).hexdigest()
        return cls(id, str(version), description, system, user, tuple(inputs), schema, source, digest)

    def render(self, variables: dict[str, Any]) -> list[dict[str, str]]:
        """The chat messages for these values; a missing or extra variable is a ``TemplateError``."""
        missing, extra = set(self.inputs) - set(variables), set(variables) - set(self.inputs)
        if missing or extra:
            raise TemplateError(
                f"judge template {self.id!r}: missing inputs {sorted(missing)}, unexpected {sorted(extra)}"
            )
        messages = []
        if self.system.strip():
            messages.append({"role": "system", "content": _ENV.from_string(self.system).render(variables).strip()})
        messages.append({"role": "user", "content": _ENV.from_string(self.user).render(variables).strip()})
        return messages

    def validator(self) -> Draft202012Validator:
        return Draft202012Validator(self.schema)


def load_template_file(path: Path) -> JudgeTemplate:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise TemplateError(f"judge template file {path}: cannot read it: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise TemplateError(f"judge template file {path}: not valid TOML: {error}") from None
    expected = {"id", "version", "description", "system", "user", "inputs", "schema"}
    missing, unknown = expected - set(data), set(data) - expected
    if missing or unknown:
        raise TemplateError(f"judge template file {path}: missing fields {sorted(missing)}, unknown {sorted(unknown)}")
    if data["id"] != path.stem:
        raise TemplateError(f"judge template file {path}: field 'id' is {data['id']!r}, expected the file name")
    return JudgeTemplate.build(**data, source=str(path.name))


@cache
def builtin_templates() -> dict[str, JudgeTemplate]:
    """Every template shipped with Assay, by id."""
    return {path.stem: load_template_file(path) for path in sorted(TEMPLATES_DIR.glob("*.toml"))}


def template(template_id: str) -> JudgeTemplate:
    try:
        return builtin_templates()[template_id]
    except KeyError:
        known = ", ".join(sorted(builtin_templates()))
        raise TemplateError(f"no judge template {template_id!r}; known templates: {known}") from None
