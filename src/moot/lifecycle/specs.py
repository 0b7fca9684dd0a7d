"""What a run refuses in a model spec before anything starts: a provider no one offers (with
the closest one named), a judge plugin seated as an agent. A run's config is checked for both
(`lifecycle/plan.py`), and so is the user's config file (`user_config`, `moot/config/user.py`),
which sits under a run's flags and its config file."""

from __future__ import annotations

from moot import protocols
from moot.config.user import UserConfig, load_user_config
from moot.models.base import provider_info, providers
from moot.text import closest

__all__ = ["judge_as_agent", "unknown_provider", "user_config", "user_config_problems"]


def judge_as_agent(where: str, spec: str) -> list[str]:
    """A judge plugin's models judge: an agent's seat is refused."""
    info = provider_info(spec.strip().partition(":")[0].lower())
    if info is None or not info.judge:
        return []
    return [
        f"{where}: {spec!r} is a judge (the {info.name} plugin): seat it as a judge "
        "(court.judges, pick.judge), not as an agent"
    ]


def unknown_provider(where: str, spec: str) -> list[str]:
    provider = spec.strip().partition(":")[0].lower()
    if not provider or provider_info(provider) is not None:
        return []
    known = [p.name for p in providers()]
    close = closest(provider, known)
    hint = f" (did you mean {close!r}?)" if close else ""
    return [
        f"{where}: unknown model provider {provider!r} in {spec!r}{hint}; "
        f"known providers: {', '.join(known)}"
    ]


def user_config() -> UserConfig:
    """The user config, with every problem at once (`user_config_problems` too)."""
    return load_user_config(check=user_config_problems)


def user_config_problems(user: UserConfig) -> list[str]:
    """What a run would refuse in `user`, each `key: message`: an unknown protocol, a model
    of `models` or of an alias whose provider is unknown or a judge (no agent)."""
    problems = []
    if user.protocol is not None and user.protocol not in protocols.names():
        problems.append(f"protocol: {protocols.unknown_protocol(user.protocol)}")
    for index, spec in enumerate(user.models):
        if ":" in spec:  # not an alias (whose models are checked below)
            problems += unknown_provider(f"models.{index}", spec)
            problems += judge_as_agent(f"models.{index}", spec)
    for name, specs in user.aliases.items():
        for spec in specs:
            problems += unknown_provider(f"aliases.{name}", spec)
    return problems
