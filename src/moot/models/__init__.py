"""Model providers: local, scripted, HTTP APIs and coding CLIs, behind one Model protocol."""
