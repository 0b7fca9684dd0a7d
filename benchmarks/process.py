"""What a whole `moot run` process costs beyond its models' time (issue 12).

Run from the repository root:  python benchmarks/process.py [--quick] [--src OTHER/src]
No network, no keys, no weights. The benchmark serves an OpenAI-compatible chat API of its own on
loopback (tests/arena_server.py, a thread in this process; every request sleeps the configured
latency, then answers in the arena's format), runs `moot run` against it as a subprocess
(the `moot` script next to this interpreter, importing moot from this checkout) with 3, 6 and
12 agents for 1 and 3 rounds at 0 and 300 ms latency, one run each, and prints one line per run.
Each agent is its own model name on the server (`#m0`, `#m1`, ...): the agents differ in their
first answers and in every revision, so the debate runs every round, and the judge says
CONSENSUS in the last round and CONTINUE before it. Under a temporary MOOT_HOME, removed at
the end.

Per run, from the server's log of each request (when it arrived, when its answer was sent, and
the arena phase its prompt belongs to: solve, then per round evaluate, revise, verify):

wall        seconds from spawning the process to its outcome line on stdout (what the user waits
            for); `exit` is the same to the end of the process (reports written).
first       seconds from spawning the process to the first request arriving at the server.
waves       how many waves of requests the server saw: taking requests in order of arrival, a
            wave starts with the first request not yet in one and holds every later request
            that arrived before that one was answered (they were in flight together). The ideal
            is the number of phases: 1 + 3 per round.
critical    the critical path: the sum over the run's phases of the longest server-side
            lifetime of a request of that phase (latency plus the server's own handling). It is
            what the run needs if every ask of a phase starts at once and nothing else costs
            time: the part of the wall time that only faster models could cut.
ratio       wall / critical (none at 0 ms latency, where the critical path is about 0).
over        wall - critical: moot's own cost per process (interpreter start included).

floor       (its own line) the same `first` for a process that imports only the libraries moot
            must import before its first request (click, asyncio, msgspec with one Struct made,
            filelock, httpx2 with its connection pool and async backend) and then posts one chat
            request: what any tool built on them pays. pydantic left it when the run config
            became msgspec Structs: a question's run imports it only once its models answer
            (tests/cli/test_process_outcome.py holds that), so its 60 ms are no floor of
            moot's. `first` minus `floor` is moot's own part. A second floor line, for
            reading, is the same process with the cyclic garbage collector off from its
            start, as the `moot` command starts (moot/collector.py): the pause spares the
            libraries' imports the collector's passes too (the plain floor makes some 90 of
            them), a saving of moot's doing that the first line credits to moot; the second
            shows moot's part without it.

instructions (its own line, where valgrind is installed) the instructions moot (3 agents) and the
            floor each run from their start to their first connect, counted by callgrind, and
            moot's own part as a share of the floor's. Timed figures on these machines move by
            tens of milliseconds from run to run; the count moves by a few parts in a thousand,
            so it tells two commits apart where time cannot. It is not the target: it leaves out
            the kernel's part (the file system calls of imports, page faults) and what threads
            cost each other: while a warm-up thread imported beside the set-up (until issue
            23's last change), moot's timed share was about twice this; it is now about this.
            The floor with the collector off is counted too, with moot's share of it.

Then `--repeat` more 3-agent, 1-round runs at that latency, each with a floor run: the
targets' `over` and `first` figures are medians over all such runs, since single runs on
these shared machines vary by tens of milliseconds. Each run starts once the last one's
detached report writer is done (its `reports.pending` marker gone, as `moot show` waits for
it): that rendering is the last run's work, not the next start-up's nor the floor's.

With MOOT_BENCH_AGAINST=<commit>, `against` then runs this tree and that commit's src/ in turn
(8 rounds of two 3-agent, 1-round runs and a 12-agent, 3-round run each, both trees started as
their console script starts them) and prints each figure's medians and their ratio: on these
machines the same tree's figures move by a third between runs an hour apart, and only
interleaved runs tell a change of 20 ms apart.

Targets (issue 12): over <= 0.3 s for 3 agents, 1 round, 300 ms; ratio <= 1.15 for 3 agents,
3 rounds, 300 ms; first <= 0.25 s for 3 agents; waves equal to the ideal at 300 ms for up to 32
agents. Issue 23: moot's own start-up share (the median `first` minus the median `floor`)
<= 0.05 s; the outcome line to the exit (`exit` minus `wall`) <= 0.02 s in every run; and the
ratio <= 1.15 for 3 and 12 agents, 3 rounds, 300 ms, taken after start-up: (wall - first) /
critical, the run's phases over real HTTP as benchmarks/engine.py's `parallel_efficiency_12x3`
takes them in process. Start-up is held to its own target, against the floor: the floor is
what the libraries cost any tool before its first request (0.45 to 0.55 s on these machines,
moving with their load), and counted in a 3.1 s critical path it alone is a ratio of 1.15. The
whole ratio and the ratio beyond the floor ((wall - the median floor) / critical) are printed
beside it, to read. The machine is shared and noisy: one run each, figures to
read, not to gate on. A missed target is printed, never raised.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from at_commit import source_at  # noqa: E402

from tests.arena_server import ChatServer, critical_path, waves  # noqa: E402


@dataclass
class Run:
    agents: int
    rounds: int
    latency: float
    wall: float
    exit: float
    first: float
    waves: int
    ideal: int
    critical: float
    outcome: str
    repeat: bool = False  # one of the extra runs for the targets' medians, not of the grid


def moot_command() -> list[str]:
    script = Path(sys.executable).parent / "moot"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "moot"]


def run_once(
    server: ChatServer,
    home: Path,
    src: Path,
    agents: int,
    rounds: int,
    latency: float,
    command: list[str] | None = None,
) -> Run:
    """One `moot run` of the moot in `src` (a source tree) against `server`, started by
    `command` (default: `moot_command()`)."""
    server.latency, server.rounds, server.calls = latency, rounds, []
    argv = [*(command or moot_command()), "run", "Count the pairs that sum to a target."]
    argv += ["--seed", "1"]
    argv += ["--rounds", str(rounds)]
    for index in range(agents):
        argv += ["--models", f"openai-compat:{server.url}#m{index}"]
    env = {**os.environ, "MOOT_HOME": str(home), "PYTHONPATH": str(src)}
    # As an installed moot: its modules' bytecode cached (the first, unmeasured run writes it,
    # outside the checkout), not compiled from source on every start.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(home / "pycache")
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    assert process.stdout is not None
    wall, outcome = float("nan"), "no outcome line"
    for line in process.stdout:
        if line.startswith("Session "):
            wall = time.perf_counter() - started
            outcome = line.split(": ", 2)[1] if line.count(": ") >= 2 else line.strip()
            break
    process.stdout.read()
    process.wait(timeout=300)
    ended = time.perf_counter() - started
    calls = list(server.calls)
    reports_written(home)
    first = min((c.arrived for c in calls), default=float("nan")) - started
    return Run(
        agents,
        rounds,
        latency,
        wall,
        ended,
        first,
        waves(calls),
        1 + 3 * rounds,
        critical_path(calls),
        outcome,
    )


def reports_written(home: Path, timeout: float = 60.0) -> None:
    """Wait while a run's detached report writer still renders (its `reports.pending` marker,
    as `moot show` waits for it): its work belongs to the run that ended, and would otherwise
    share the CPU with the next run's start-up or the floor's."""
    deadline = time.monotonic() + timeout
    while any(home.glob("sessions/*/reports.pending")) and time.monotonic() < deadline:
        time.sleep(0.01)


# The libraries' part of `first`: their imports, one record class made, one request posted.
# msgspec joined them when moot's shared records became msgspec Structs (issue 23), and
# pydantic (with one model built) left them when the run config did: a run imports it no more
# before its first request.
FLOOR = """
import asyncio, sys
import click, filelock, msgspec
import httpx2

class Message(msgspec.Struct):
    role: str
    content: str

async def post(url):
    async with httpx2.AsyncClient(verify=False) as client:
        message = msgspec.to_builtins(Message(role="user", content="hi"))
        body = {"model": "m0", "messages": [message]}
        await client.post(url + "/chat/completions", json=body)

asyncio.run(post(sys.argv[1]))
"""


# The floor as moot starts: without the cyclic garbage collector (moot/collector.py), which
# also spares the libraries' imports its passes. A figure to read beside the target's.
PAUSED = "import gc\ngc.disable()\n"


def floor_once(server: ChatServer, home: Path, collecting: bool = True) -> float:
    """Seconds from spawning a process that runs FLOOR to its request arriving; with
    `collecting` False, FLOOR with the collector off from its start (PAUSED)."""
    server.latency, server.calls = 0.0, []
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(home / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    script = FLOOR if collecting else PAUSED + FLOOR
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", script, server.url], env=env, check=True, timeout=60)
    return min(c.arrived for c in server.calls) - started


# Put first on the path of a process measured by `instructions`: it ends the process at its
# first connect, before any byte is sent, so that nothing after the first request is counted.
STOP_AT_CONNECT = """
import os, socket

def _stop(self, address):
    os._exit(0)

socket.socket.connect = _stop
"""


def instructions(home: Path, src: Path) -> tuple[int, int, int] | None:
    """Instructions that moot (3 agents) and the floor each run from their start to their first
    connect, counted by valgrind's callgrind; None without valgrind. Unlike seconds, the count
    does not move with the machine's load: the same tree gives the same figure to a few parts
    in a thousand. Neither needs a server: each stops as it connects (STOP_AT_CONNECT)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    stop = home / "stop-at-connect"
    stop.mkdir(exist_ok=True)
    (stop / "sitecustomize.py").write_text(STOP_AT_CONNECT)
    url = "http://127.0.0.1:9/v1"  # never reached
    argv = [*command_for(src), "run", "Count the pairs that sum to a target.", "--seed", "1"]
    for index in range(3):
        argv += ["--models", f"openai-compat:{url}#m{index}"]
    env = {**os.environ, "MOOT_HOME": str(home), "PYTHONPYCACHEPREFIX": str(home / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    counts = []
    for command, path in (
        (argv, f"{stop}{os.pathsep}{src}"),
        ([sys.executable, "-c", FLOOR, url], str(stop)),
        ([sys.executable, "-c", PAUSED + FLOOR, url], str(stop)),
    ):
        run_env = {**env, "PYTHONPATH": path}
        subprocess.run(command, env=run_env, capture_output=True, timeout=120)  # bytecode cached
        counted = subprocess.run(
            [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
            env=run_env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        found = [line for line in counted.stderr.splitlines() if "Collected" in line]
        if not found:
            return None
        counts.append(int(found[-1].split()[-1]))
    return counts[0], counts[1], counts[2]


def describe(run: Run) -> str:
    ratio = f"{run.wall / run.critical:.2f}" if run.latency else "-"
    return (
        f"agents {run.agents:>2}  rounds {run.rounds}  latency {run.latency * 1000:>3.0f} ms:  "
        f"wall {run.wall:.2f}s (exit {run.exit:.2f}s)  first {run.first:.2f}s  "
        f"waves {run.waves}/{run.ideal}  critical {run.critical:.2f}s  ratio {ratio}  "
        f"over {run.wall - run.critical:.2f}s  [{run.outcome}]"
    )


def targets(runs: list[Run], floors: list[float], paused: list[float]) -> list[str]:
    def verdict(value: float, limit: float, digits: int = 2) -> str:
        state = "met" if value <= limit else "MISSED"
        return f"{value:.{digits}f} (target <= {limit:.{digits}f}: {state})"

    lines = []
    overs = [r.wall - r.critical for r in runs if (r.agents, r.rounds) == (3, 1) and r.latency]
    if overs:
        over = verdict(statistics.median(overs), 0.3)
        lines.append(f"over, 3 agents 1 round, median of {len(overs)} runs: {over}")
    floor = statistics.median(floors) if floors else None
    for run in runs:
        if run.agents in (3, 12) and run.rounds == 3 and run.latency and not run.repeat:
            # issue 23: the run from its first request; start-up has a target of its own
            after = verdict((run.wall - run.first) / run.critical, 1.15)
            beyond = (
                ""
                if floor is None
                else f"; beyond the floor {(run.wall - floor) / run.critical:.2f}"
            )
            lines.append(
                f"ratio after start-up, {run.agents} agents 3 rounds: {after}; whole "
                f"{run.wall / run.critical:.2f}{beyond}"
            )
    firsts = [r.first for r in runs if r.agents == 3]
    if firsts:
        first = verdict(statistics.median(firsts), 0.25)
        lines.append(f"first request, 3 agents, median of {len(firsts)} runs: {first}")
    if firsts and floor is not None:
        lines.append(
            f"first request floor (the libraries alone), median of {len(floors)} runs: {floor:.2f}"
        )
        # issue 23: what moot adds to start-up above what its libraries cost any tool
        share = verdict(statistics.median(firsts) - floor, 0.05, 3)
        lines.append(f"start-up share, moot's own above the floor: {share}")
    if firsts and paused:  # for reading: the collector's part of the share is moot's doing
        bare = statistics.median(paused)
        lines.append(
            f"the floor with the collector off, as moot starts (no target), median of "
            f"{len(paused)} runs: {bare:.2f}; moot's own above it: "
            f"{statistics.median(firsts) - bare:.3f}"
        )
    tails = [r.exit - r.wall for r in runs]
    if tails:  # issue 23: the reports must not hold the exit back after the outcome line
        tail = verdict(max(tails), 0.02, 3)  # milliseconds: 0.024 is not 0.02
        median = statistics.median(tails)
        lines.append(
            f"outcome line to exit, worst of {len(tails)} runs: {tail}; median {median:.3f}"
        )
    grid = [r for r in runs if r.latency and not r.repeat]
    extra = [f"{r.agents}x{r.rounds}: {r.waves}/{r.ideal}" for r in grid]
    missed = [r for r in grid if r.waves != r.ideal]
    state = "all ideal" if not missed else "MISSED"
    lines.append(f"waves with latency: {state} ({', '.join(extra)})")
    return lines


AGAINST_ROUNDS = 8  # interleaved rounds of the comparison with another commit
AGAINST_FIRSTS = 2  # 3-agent runs a round for the first request, whose spread is widest


def command_for(src: Path) -> list[str]:
    """How to start the moot in `src` as its console script does: its `moot/__main__.py`
    where it has one, else the CLI's `main` (commits before the console script moved)."""
    if (src / "moot" / "__main__.py").exists():
        return [sys.executable, "-c", "from moot.__main__ import main; main()"]
    return [sys.executable, "-c", "from moot.cli import main; main()"]


def against(server: ChatServer, home: Path, src: Path, commit: str, latency: float) -> None:
    """This tree beside `commit`'s src/ in interleaved runs (both started the same way, by
    `command_for`): a 3-agent, 1-round run for the first request and a 12-agent, 3-round run
    for the ratio, each tree in turn, AGAINST_ROUNDS times. Prints the medians and this tree's
    over the other's, figures of one run that the machine's load affects alike."""
    with source_at(commit) as theirs:
        trees = {"this tree": src, commit: theirs}
        firsts: dict[str, list[float]] = {name: [] for name in trees}
        ratios: dict[str, list[float]] = {name: [] for name in trees}
        for tree in trees.values():  # not measured: each tree's bytecode cache
            run_once(server, home, tree, 3, 1, 0.0, command_for(tree))
        for _ in range(AGAINST_ROUNDS):
            for name, tree in trees.items():
                for _ in range(AGAINST_FIRSTS):
                    first = run_once(server, home, tree, 3, 1, latency, command_for(tree)).first
                    firsts[name].append(first)
                run = run_once(server, home, tree, 12, 3, latency, command_for(tree))
                ratios[name].append(run.wall / run.critical)
    for what, figures in (("first request, 3 agents", firsts), ("ratio, 12x3", ratios)):
        mine, old = statistics.median(figures["this tree"]), statistics.median(figures[commit])
        print(
            f"{what}, median of {len(figures[commit])} interleaved runs: {mine:.3f} here, "
            f"{old:.3f} at {commit}; ratio {mine / old:.3f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 agents only")
    parser.add_argument(
        "--agents", type=int, nargs="+", default=[3, 6, 12], help="the grid's agent counts"
    )
    parser.add_argument("--latency", type=float, default=0.3, help="seconds (default 0.3)")
    parser.add_argument(
        "--repeat",
        type=int,
        default=6,
        help="extra 3-agent, 1-round runs (each with a floor run) for the targets' medians",
    )
    parser.add_argument(
        "--src",
        type=Path,
        default=ROOT / "src",
        help="the moot source tree to run (default: this checkout's; another: a before/after)",
    )
    args = parser.parse_args()
    src = args.src.resolve()
    home = Path(tempfile.mkdtemp(prefix="moot-bench-process-"))
    server = ChatServer()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    runs = []
    try:
        run_once(server, home, src, 3, 1, 0.0)  # not measured: warms the disk and bytecode caches
        floor_once(server, home)
        floors: list[float] = []
        paused: list[float] = []
        for agents in (3,) if args.quick else args.agents:
            for rounds in (1, 3):
                for latency in (0.0, args.latency):
                    run = run_once(server, home, src, agents, rounds, latency)
                    runs.append(run)
                    print(describe(run), flush=True)
                    if agents == 3:  # taken between them, under the same conditions
                        floors.append(floor_once(server, home))
                        paused.append(floor_once(server, home, collecting=False))
        for _ in range(args.repeat):  # the targets' figures are medians: this machine is noisy
            run = run_once(server, home, src, 3, 1, args.latency)
            runs.append(replace(run, repeat=True))
            floors.append(floor_once(server, home))
            paused.append(floor_once(server, home, collecting=False))
        for line in targets(runs, floors, paused):
            print(line)
        counted = instructions(home, src)
        if counted is None:
            print("start-up share in instructions: not counted (valgrind is not installed)")
        else:  # no target: the kernel's part (imports' file system calls, page faults) and
            # what threads cost each other are not counted
            mine, floor, bare = counted
            print(
                f"start-up share in instructions (callgrind, to the first connect; user space "
                f"only): moot {mine / 1e6:.0f} M, the floor {floor / 1e6:.0f} M; moot's own "
                f"{(mine - floor) / floor:.3f} of the floor's; the floor with the collector "
                f"off {bare / 1e6:.0f} M, moot's own {(mine - bare) / bare:.3f} of that"
            )
        commit = os.environ.get("MOOT_BENCH_AGAINST")
        if commit:
            against(server, home, src, commit, args.latency)
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
