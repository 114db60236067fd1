"""Run hostile inputs through Assay's entry points in a watched worker process.

Each input is one call; the worker reports when it starts and how it ended. A call that does not end within
``hang_s`` is a hang (the worker is killed and a new one takes the next input); a worker that dies (memory
limit, interpreter crash) is a crash; an exception other than the entry point's declared refusal is a crash.
The worker runs under a memory limit, so a memory bomb is counted instead of taking the machine down.
"""

import multiprocessing as mp
import resource
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MEMORY_LIMIT_BYTES = 4 * 1024**3


@dataclass
class FuzzTally:
    inputs: int = 0
    refused: int = 0
    crashes: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)


def _worker(target: Callable[[Any], str], items: list[Any], start: int, pipe: Any) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    for index in range(start, len(items)):
        pipe.send(("start", index))
        try:
            outcome = target(items[index])
        except BaseException as error:
            outcome = "crash: " + "".join(traceback.format_exception_only(error)).strip()[:300]
        pipe.send(("done", index, outcome))
    pipe.send(("finished",))


def run_watched(target: Callable[[Any], str], items: list[Any], hang_s: float) -> FuzzTally:
    """``target(item)`` returns "ok", "refused" or "crash: why"; see the module docstring for hangs."""
    tally = FuzzTally(inputs=len(items))
    context = mp.get_context("fork")
    start = 0
    while start < len(items):
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(target=_worker, args=(target, items, start, sender), daemon=True)
        process.start()
        sender.close()
        current = start
        while True:
            if not receiver.poll(hang_s):
                tally.hangs.append(repr(items[current])[:200])
                process.kill()
                break
            try:
                message = receiver.recv()
            except EOFError:
                tally.crashes.append(f"worker died (exit {process.exitcode}) on {repr(items[current])[:200]}")
                break
            if message[0] == "start":
                current = message[1]
            elif message[0] == "done":
                outcome = message[2]
                if outcome == "refused":
                    tally.refused += 1
                elif outcome != "ok":
                    tally.crashes.append(f"{outcome} on {repr(items[message[1]])[:200]}")
            else:
                current = len(items) - 1
                break
        process.join(timeout=5)
        start = current + 1
    return tally
