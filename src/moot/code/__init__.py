"""Workspaces for code tasks: one git worktree per agent, starting from the user's exact state.

A pure library over `git` subprocesses (no shell; model text reaches git only on stdin). The
flow of a code task:

    repo = open_repo(path)                          # validate; nothing created
    baseline = take_baseline(repo, session, session_dir=folder)
    trees = create_worktrees(repo, baseline, folder / "worktrees", ["agent_a", "agent_b"])
    context = repo_context(repo, baseline, ["src/**/*.py"], budget_tokens=20_000)
    apply_patch(trees[0], model_diff)               # API agents; CLI agents edit in place
    change = save_patch(trees[0], folder / "agent_a.patch")
    apply_to_user_tree(repo, baseline, change.patch)    # `moot apply`
    clean_session(repo, session)

Design:

- The baseline is a snapshot of the user's working state taken *without touching it*: the
  user's index is copied to a temporary file, `GIT_INDEX_FILE` points git at the copy, and
  `git add -A` + `write-tree` + `commit-tree` turn HEAD plus staged, unstaged and untracked
  (not ignored) files into one commit whose parent is HEAD. `git stash create` would refuse
  untracked files and `git stash` would change the user's tree, index and stash; the temporary
  index changes nothing but the object store. Copying the index (rather than starting empty)
  lets git reuse its stat data, so the snapshot costs about one `git status`.
- The baseline commit is kept alive by `refs/moot/<session>/baseline`: a ref outside
  `refs/heads` is no branch of the user's (`git branch` does not show it) yet keeps `git gc`
  from dropping the commit while the session lives, so `moot apply` works days later.
- Each agent's worktree is on branch `moot/<session>/<alias>` at the baseline commit, so its
  files equal the user's working files; its change is `git diff baseline` after `add -A` into
  a temporary copy of the worktree's index (safe while the agent works). In the worktree the
  user's uncommitted work is part of the baseline commit, so an agent's `git status` shows
  only its own edits. Files the user's .gitignore ignores are not copied (they are usually
  build outputs, caches or secrets); nor are the contents of checked-out submodules, which a
  worktree cannot hold: such repositories are refused.
- Every ref and worktree is named in a manifest (`<git dir>/moot/sessions/<session>.json`)
  written atomically *before* git creates it, so a crash at any point leaves nothing that
  `find_strays` cannot find; `clean_session` removes a half-made worktree as well as a whole
  one. A worktree root inside the user's repository gets a `.gitignore` of `*`, so the user's
  `git status` never shows it.
- `moot apply` computes the result in git's object store first (the patch applied to the
  baseline in a scratch index, then `merge-tree --write-tree` against the user's current
  state when it changed since), and touches the user's files only once that is clean. It
  never commits unless given a message; then it commits through a scratch index built from
  HEAD plus the change alone, so the user's uncommitted work never lands in moot's commit.
- A worktree may start from another's current work (`create_worktrees(start_from=...)`: a
  snapshot commit on top of its HEAD, recorded in the manifest as its base), and its change is
  then measured against that base. `commit_worktree` commits a worktree's work on its own
  branch; `publish_branch` points a branch outside `moot/` at it, only ever fast-forwarding,
  so it outlives `moot clean`.

Apart from what `apply_to_user_tree` and `publish_branch` do on request, the user's files,
index, stash and branches are never modified.
"""

from moot.code import _worktrees
from moot.code._apply import Applied, apply_to_user_tree
from moot.code._branches import commit_worktree, publish_branch
from moot.code._context import ContextFile, RepoContext, repo_context
from moot.code._diff import (
    MAX_PATCH_BYTES,
    Change,
    DiffStats,
    PatchResult,
    apply_patch,
    save_patch,
    worktree_change,
)
from moot.code._repo import Repo, open_repo, resolve_in_repo
from moot.code._snapshot import Baseline, load_baseline, take_baseline
from moot.code._worktrees import *  # noqa: F403 - named once, in its __all__ (added below)

__all__ = [
    "MAX_PATCH_BYTES",
    "Applied",
    "Baseline",
    "Change",
    "ContextFile",
    "DiffStats",
    "PatchResult",
    "Repo",
    "RepoContext",
    "apply_patch",
    "apply_to_user_tree",
    "commit_worktree",
    "load_baseline",
    "open_repo",
    "publish_branch",
    "repo_context",
    "resolve_in_repo",
    "save_patch",
    "take_baseline",
    "worktree_change",
]
__all__ += _worktrees.__all__  # the worktrees' names, listed once in their module
