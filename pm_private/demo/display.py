"""What the demo prints while it runs: a heading per part, a line per step with its elapsed
seconds, a headline per part and the files written.

On a terminal each running step is one live line (a spinner and the seconds so far) that turns
into a finished line, and PyMC draws its own progress bar while sampling.  Into a log (output that
is not a terminal) every line is printed once: a step's start and its end, and a line every
quarter of a sampler's iterations, so a log shows what runs and how long it took.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from pathlib import Path

__all__ = ["Display", "SamplerClock"]


class Display:
    """The demo's output.

    Parameters
    ----------
    live : bool
        Output is a terminal: live step lines and PyMC's progress bar.  False: plain lines only.
    file : file-like, optional
        Where to print (default ``sys.stdout``).
    """

    def __init__(self, *, live: bool, file=None):
        self.live = live
        self.file = file or sys.stdout
        self.start = time.monotonic()
        self.written: list[Path] = []
        self.headlines: list[str] = []

    def print(self, text: str = "") -> None:
        """Print a line (flushed: a log shows it at once)."""
        print(text, file=self.file, flush=True)

    def elapsed(self) -> float:
        """Seconds since the demo started."""
        return time.monotonic() - self.start

    def part(self, number: int, total: int, title: str) -> None:
        """The heading of a part."""
        self.print(f"\n[{number}/{total}] {title}")

    @contextmanager
    def step(self, text: str, *, spinner: bool = True):
        """Run a step: its line, then the same line with the seconds it took.

        Parameters
        ----------
        text : str
            What the step does.
        spinner : bool, default True
            On a terminal, keep a live line with the seconds so far while the step runs.  False
            for a step that draws its own progress bar (PyMC's sampler): one display at a time.
        """
        began = time.monotonic()
        if self.live and spinner:
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            console = Console(file=self.file)
            with Progress(
                SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=True
            ) as bar:
                bar.add_task(text, total=None)
                yield
        else:
            self.print(f"  … {text}" if self.live else f"  [{self.elapsed():5.0f} s] {text} …")
            yield
        self.print(f"  ✓ {text} ({time.monotonic() - began:.1f} s)")

    def sampler_clock(self, total: int) -> SamplerClock:
        """A ``pm.sample`` callback that times compiling (until the first draw) and sampling, and
        into a log prints a line every quarter of ``total`` iterations (on a terminal PyMC's
        progress bar shows them)."""
        return SamplerClock(self, total)

    def headline(self, text: str) -> None:
        """The one-line result of a part."""
        self.headlines.append(text)
        self.print(f"  ⇒ {text}")

    def wrote(self, path: Path) -> Path:
        """Record a file written (listed at the end); returns ``path``."""
        self.written.append(Path(path))
        return Path(path)

    def close(self) -> None:
        """The headlines again, the files written and the total time."""
        self.print("\nIn short:")
        for text in self.headlines:
            self.print(f"  ⇒ {text}")
        self.print("\nFiles written:")
        for path in self.written:
            self.print(f"  {path}")
        self.print(f"\nDone in {self.elapsed():.0f} s.")


class SamplerClock:
    """``pm.sample``'s callback: the seconds until the first draw (PyTensor compiles the model's
    functions on their first call) and after it, and a line every quarter of the iterations (all
    chains together) where the output is not a terminal.

    Parameters
    ----------
    display : Display
    total : int
        The iterations of all chains together.
    """

    def __init__(self, display: Display, total: int):
        self.display, self.total, self.done = display, total, 0
        self.every = max(1, total // 4)
        self.created = time.monotonic()
        self.first: float | None = None

    @property
    def compiling(self) -> float:
        """Seconds from the clock's creation (before the step is built) to the first draw."""
        return (self.first or time.monotonic()) - self.created

    @property
    def sampling(self) -> float:
        """Seconds since the first draw."""
        return time.monotonic() - (self.first or time.monotonic())

    def __call__(self, trace=None, draw=None) -> None:
        self.done += 1
        if self.first is None:
            self.first = time.monotonic()
            if not self.display.live:
                self.display.print(
                    f"  [{self.display.elapsed():5.0f} s]   compiled and at the mode in {self.compiling:.0f} s; sampling"
                )
        if not self.display.live and (self.done % self.every == 0 or self.done == self.total):
            where = f" (chain {draw.chain + 1}, {'tuning' if draw.tuning else 'drawing'})" if draw is not None else ""
            self.display.print(
                f"  [{self.display.elapsed():5.0f} s]   NUTS {100 * self.done / self.total:3.0f}% of {self.total} "
                f"iterations{where}"
            )
