"""Seed 004's feature pipeline: a feature request to reviewed, tested commits on a branch.

`moot plan "FEATURE" --repo PATH` explores the repository, drafts a typed plan, refines it in a
plan tournament and gates it with a critic (planning.py); `moot execute PLAN` runs each task
through the seed's state machine: developer, QA gates, reviewer, test engineer, implementation
tournament, one commit per task (execution.py; one task's state machine: task.py). Both are
sessions of the `pipeline` protocol (definition.py), so every step is journaled and `moot
resume` continues at the exact edge; the tournaments are refine sessions of their own
(tournaments.py). The plan (document.py), the
role prompts (prompts.py), the QA gates (gates.py) and the lessons kept per repository
(lessons.py) are the rest; view.py is what `moot status` and the reports show of a session.
"""
