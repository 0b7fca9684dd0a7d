"""One run from its config to its end: plan, projection, start, resume, replay, migrate, apply."""
