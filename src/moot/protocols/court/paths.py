"""Files a court config names must lie inside the working folder unless
`court.allow_external_paths` (seed section 9)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["path_problems"]


def _spec_file(spec: Any) -> str | None:
    """The file a model spec names, if any: `scripted:FILE[#fn]`, `local:PATH.gguf`."""
    if not isinstance(spec, str):
        return None
    provider, _, name = spec.strip().partition(":")
    if provider == "scripted" and name and not name.startswith("@"):
        return name.partition("#")[0]
    if provider == "local" and (name.endswith(".gguf") or "/" in name or "\\" in name):
        return name
    return None


def path_problems(data: Mapping[str, Any], cwd: Path) -> list[str]:
    """Court configs may name files only inside `cwd` unless court.allow_external_paths
    (seed section 9): model files of agents and judges, and court.checkpoint_dir."""
    court = data.get("court")
    court = court if isinstance(court, dict) else {}
    if court.get("allow_external_paths") is True:
        return []
    named: list[tuple[str, Any]] = []
    for section, items in (("agents", data.get("agents")), ("court.judges", court.get("judges"))):
        for index, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict):
                named.append((f"{section}.{index}.model", _spec_file(item.get("model"))))
    named.append(("court.checkpoint_dir", court.get("checkpoint_dir")))
    root = cwd.resolve()
    problems = []
    for where, value in named:
        if not isinstance(value, str) or not value:
            continue
        resolved = (root / Path(value).expanduser()).resolve()
        if not resolved.is_relative_to(root):
            problems.append(
                f"{where}: {value!r} is outside the working folder {root}; move it inside, or "
                "set court.allow_external_paths = true"
            )
    return problems
