"""`moot serve`: a local web view of every session, live, where a run can be started and stopped."""

from __future__ import annotations

from moot.serve.app import create_app

__all__ = ["create_app"]
