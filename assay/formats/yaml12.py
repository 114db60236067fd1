"""YAML read as YAML 1.2 (the core schema), as JavaScript tools such as promptfoo read it.

PyYAML follows YAML 1.1, where ``Yes``, ``no``, ``on`` and ``off`` are booleans, ``1:20`` is the number 80 and
``0777`` is octal: a promptfoo test ``vars: {body: Yes}`` would become ``True``. This loader resolves plain
scalars by the 1.2 core schema only (``true``/``false``, ``null``/``~``, decimal, ``0o``/``0x`` integers and
floats; no dates), so every other word stays the text the author typed. Errors name the file and line. Aliases are
allowed (promptfoo configs reuse assertion lists through anchors) but a document whose aliases expand beyond
`MAX_YAML_NODES` nodes is refused before it is built, so a few nested anchors cannot exhaust memory.
"""

import re
from pathlib import Path
from typing import Any

import yaml

from assay.formats.errors import MAX_JSON_DEPTH, FormatError, read_text
from assay.formats.json_depth import deeper_than

MAX_YAML_NODES = 1_000_000


class _Core12Loader(yaml.SafeLoader):
    """SafeLoader with the YAML 1.2 core schema's implicit types instead of YAML 1.1's."""


_YAML11_ONLY = ("bool", "int", "float", "timestamp")
_Core12Loader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag.rsplit(":", 1)[-1] not in _YAML11_ONLY]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Core12Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                    list("tTfF"))  # fmt: skip
_Core12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
_Core12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    return int(text, 0) if text.startswith(("0o", "0x")) else int(text)


_Core12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _expanded_size(node: yaml.Node, sizes: dict[int, int]) -> int:
    """How many nodes ``node`` becomes once its aliases are expanded (each shared node counted once per use)."""
    if id(node) not in sizes:
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        sizes[id(node)] = 1 + sum(_expanded_size(child, sizes) for child in children)
    return sizes[id(node)]


def load_yaml(path: Path) -> Any:
    """The YAML document in ``path``; a syntax error, several documents, aliases expanding beyond
    `MAX_YAML_NODES` or nesting deeper than JSON is allowed are `FormatError`s naming the line."""
    text = read_text(path)
    loader = _Core12Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None and _expanded_size(node, {}) > MAX_YAML_NODES:
            raise FormatError(path, "", f"its aliases expand to more than {MAX_YAML_NODES} values")
        value = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise FormatError(path, where, f"invalid YAML: {error.problem or error.context}") from None
    except yaml.YAMLError as error:
        raise FormatError(path, "", f"invalid YAML: {error}") from None
    except RecursionError:
        raise FormatError(path, "", f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    finally:
        loader.dispose()
    if deeper_than(value, MAX_JSON_DEPTH):
        raise FormatError(path, "", f"nested deeper than {MAX_JSON_DEPTH} levels")
    return value
