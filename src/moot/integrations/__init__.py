"""moot inside other tools: the `llm` plugin (`llm -m moot "question"`)."""
