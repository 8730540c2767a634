"""Write docs/reference/components.md, the reference of every registered component,
from the code: the class docstring (the model and its equations), its ports with
message types, its parameters with types, defaults, units and descriptions (from
``Parameters``, through the same Description `moonpool describe` prints).

    python scripts/make_reference.py            # rewrite the page
    python scripts/make_reference.py --check    # exit 1 if the page is stale

tests/unit/test_reference_docs.py fails when the committed page is not the one this
script writes, so the docs never abridge or drift from a component.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path

from moonpool.components.sdk.loading import load_entry, registered
from moonpool.components.sdk.wire import describe_class, from_parameter_value
from moonpool.v1 import lifecycle_pb2 as lc

PAGE = Path(__file__).resolve().parent.parent / "docs" / "reference" / "components.md"
TYPES = {v: k.removeprefix("PARAMETER_TYPE_").lower().replace("_", " ")
         for k, v in lc.ParameterType.items()}


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _anchor(name: str) -> str:
    return name.replace(".", "").replace("_", "_").lower()


def render() -> str:
    names = sorted(registered().items())
    out = [
        "# Component reference",
        "",
        "Generated from the code by `python scripts/make_reference.py` (do not edit: "
        "`tests/unit/test_reference_docs.py` fails when this page is stale). For each "
        "registered component: what its class docstring says (the model), its ports and "
        "its parameters exactly as `moonpool describe NAME` gives them. Ports that depend "
        "on parameters (`fmu`) are listed for the defaults.",
        "",
        "| name | class |",
        "| --- | --- |",
    ]
    out += [f"| [`{n}`](#{_anchor(n)}) | `{t}` |" for n, t in names]
    for name, target in names:
        cls = load_entry(name)
        desc = describe_class(cls)
        out += ["", f"## {name}", "", f"`{target}`", ""]
        doc = inspect.getdoc(cls) or desc.description or "(no docstring)"
        out += ["```text", doc.rstrip(), "```", ""]
        for title, ports in (("Inputs", desc.inputs), ("Outputs", desc.outputs)):
            out.append(f"**{title}**" + ("" if ports else ": none"))
            if ports:
                out += ["", "| port | message type | description |", "| --- | --- | --- |"]
                for p in ports:
                    q = (" (queued)" if p.queued else "") + (" + attachment" if p.attachment
                                                             else "")
                    out.append(f"| `{p.name}` | `{p.type}`{q} | {_cell(p.description)} |")
            out.append("")
        out.append("**Parameters**" + ("" if desc.parameters else ": none"))
        if desc.parameters:
            out += ["", "| parameter | type | default | unit | description |",
                    "| --- | --- | --- | --- | --- |"]
            for prm in desc.parameters:
                default = ("required" if prm.required else
                           f"`{json.dumps(from_parameter_value(prm.default_value), sort_keys=True)}`")
                out.append(f"| `{prm.name}` | {TYPES.get(prm.type, '?')} | {_cell(default)} | "
                           f"{_cell(prm.unit) or '–'} | {_cell(prm.description)} |")
    return "\n".join(out).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    args = parser.parse_args()
    text = render()
    if args.check:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE} is stale; run python scripts/make_reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
