"""The JSON Schema (draft 2020-12) of rig files, derived from :mod:`.vocabulary`.

Editors that read JSON Schema for TOML (Taplo, Even Better TOML) use it to complete
keys, show each key's meaning and flag unknown keys, wrong types and bad choices
while a rig is written (docs/rigs.md, "Editor support"). It states what can be said
of the file alone: the loader still does more (durations in range, references
between tables, key files, and with ``moonpool check`` everything that needs the
component classes). Regenerate the committed copy with::

    python -m moonpool.orchestrator.rigfile.schema > docs/rig.schema.json
"""

from __future__ import annotations

import json
import sys
from typing import Any

from .vocabulary import NAME, NO_DEFAULT, PLACEMENTS, TOP, Key, Table, runs

DIALECT = "https://json-schema.org/draft/2020-12/schema"
COMMAND = "python -m moonpool.orchestrator.rigfile.schema > docs/rig.schema.json"
"""How docs/rig.schema.json is made."""


def rig_schema() -> dict[str, Any]:
    """The schema of a whole rig file."""
    return {"$schema": DIALECT, **_table(TOP), "title": "moonpool rig file"}


def render() -> str:
    """:func:`rig_schema` as the text of docs/rig.schema.json."""
    return json.dumps(rig_schema(), indent=2, ensure_ascii=False) + "\n"


def _table(table: Table) -> dict[str, Any]:
    """One table: its keys, the required ones, and no others."""
    out: dict[str, Any] = {
        "title": table.title,
        "description": table.description,
        "type": "object",
        "properties": {k.name: _key(k) for k in table.keys},
        "additionalProperties": False,
    }
    required = [k.name for k in table.keys if k.required]
    if required:
        out["required"] = required
    rules = [*_placement_rules(table.keys), *table.rules]
    if rules:
        out["allOf"] = rules
    return out


def _key(key: Key) -> dict[str, Any]:
    out: dict[str, Any] = {"description": key.description}
    if key.table is None:
        out.update(key.schema)
    elif key.shape == "table":
        out.update({k: v for k, v in _table(key.table).items() if k != "description"})
    elif key.shape == "named":
        out.update({"type": "object", "minProperties": 1, "propertyNames": NAME,
                    "additionalProperties": _table(key.table)})
    else:
        out.update({"type": "array", "items": _table(key.table)})
    if key.default is not NO_DEFAULT:
        out["default"] = key.default
    return out


def _placement_rules(keys: tuple[Key, ...]) -> list[dict[str, Any]]:
    """Component keys refused or required by some placements (``run``), one rule per
    set of placements."""
    refused: dict[tuple[str, ...], list[str]] = {}
    required: dict[tuple[str, ...], list[str]] = {}
    for k in keys:
        if k.only:
            others = tuple(p for p in PLACEMENTS if p not in (*k.only, *k.ignored_by))
            refused.setdefault(others, []).append(k.name)
        if k.required_by:
            required.setdefault(k.required_by, []).append(k.name)
    rules = [{"if": runs(where), "then": {"properties": {n: False for n in names}}}
             for where, names in refused.items()]
    rules += [{"if": runs(where), "then": {"required": names}}
              for where, names in required.items()]
    return rules


if __name__ == "__main__":
    sys.stdout.buffer.write(render().encode("utf-8"))
