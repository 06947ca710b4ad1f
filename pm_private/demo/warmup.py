"""Compile the later parts' models in a second process while the first parts run.

The first run on a machine spends most of its time compiling each model's functions (PyTensor
and Numba, one core each), and PyTensor caches what it compiled on disk.  On a machine with a
second core the demo hands the survival model and the drug-sensitivity study's models to a worker
process at the start: the worker builds each on data of the same shapes (seeded releases that are
never written or charged, and are discarded) and compiles them into the shared cache, and the
part that needs a model waits for its compile to finish and then loads it from the cache.  Later
runs find everything cached, and the worker has nothing left to do but load it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os

from .display import Display
from .shared import AUXILIARY, COMPILE, quiet

__all__ = ["Warmup"]

#: The parts whose models the worker compiles, in the order the demo needs them.
WARMED = ("survival", "drug-sensitivity")


class Warmup:
    """The worker process and the compile of each part handed to it.

    Parameters
    ----------
    parts : tuple of str
        The parts that will run; the worker compiles those of :data:`WARMED` unless the first
        part is one of them (nothing would run meanwhile) or the machine has one core.
    seed : int
        The demo's seed (the study's design depends on it).
    study : argparse.Namespace
        The drug-sensitivity study's settings.
    methods : tuple of str
        The study's methods.
    """

    def __init__(self, parts: tuple[str, ...], seed: int, study: argparse.Namespace, methods: tuple[str, ...]):
        self.parts = [part for part in WARMED if part in parts and part != parts[0]]
        self.done: dict[str, str | None] = {}
        self.process = None
        if not self.parts or (os.cpu_count() or 1) < 2:
            self.parts = []
            return
        import multiprocessing

        context = multiprocessing.get_context("spawn")  # a fresh interpreter: no state of this one
        self.results = context.Queue()
        settings = {name: getattr(study, name) for name in ("drugs", "genes", "sizes", "epsilons", "repeats", "public")}
        settings["methods"] = methods
        files = (study.expression, study.responses)
        self.process = context.Process(
            target=_work, args=(self.parts, seed, settings, files, self.results), name="pm-private demo compile"
        )
        self.process.start()

    def describe(self) -> str | None:
        """What the worker compiles, as a sentence (None without a worker)."""
        if not self.parts:
            return None
        return f"compiling the models of {' and '.join(self.parts)} in a second process meanwhile"

    def wait(self, part: str, display: Display) -> None:
        """Wait for the worker's compile of ``part`` (a step of its own when it is not done).  A
        failed compile is reported and left to the part itself."""
        if part not in self.parts:
            return
        self._collect(part, timeout=0.0)
        if part not in self.done:
            with display.step(f"waiting for the second process to finish compiling the {part} models"):
                self._collect(part)
        if self.done[part] is not None:
            display.print(f"  (the second process could not compile them: {self.done[part]}; compiling here)")

    def _collect(self, part: str, timeout: float | None = None) -> None:
        """Read the worker's reports until ``part``'s (or, with ``timeout``, until none is waiting)."""
        import queue

        while part not in self.done:
            try:
                finished, error = self.results.get(timeout=1.0 if timeout is None else timeout)
            except queue.Empty:
                if timeout is not None:
                    return
                if not self.process.is_alive():
                    self.done[part] = f"it ended with exit code {self.process.exitcode}"
                continue
            self.done[finished] = error

    def close(self) -> None:
        """Stop the worker (a compile still running is abandoned)."""
        if self.process is not None:
            self.process.terminate()
            self.process.join()


def _work(parts, seed, settings, files, results) -> None:
    """The worker: compile each part's models in turn, reporting each as done (or its error)."""
    compile_part = {
        "survival": lambda: _compile_survival(seed),
        "drug-sensitivity": lambda: _compile_study(settings, files, seed),
    }
    for part in parts:
        try:
            compile_part[part]()
        except Exception as error:  # reported by the demo, which then compiles the part itself
            results.put((part, f"{type(error).__name__}: {error}"))
        else:
            results.put((part, None))


@contextlib.contextmanager
def _silent():
    """The worker prints nothing: its output would break into the demo's lines."""
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(io.StringIO()):
        import pymc  # noqa: F401  (before quiet(): importing PyMC sets its logger's level)

        with quiet():
            yield


def _compile_survival(seed: int) -> None:
    """Compile the survival part's model: the same table shape, a seeded release discarded."""
    import numpy as np
    import pymc as pm

    from ..datasets.flchain import load_flchain
    from ..survival.exits.model import survival_model
    from ..survival.exits.release import release_survival_stats
    from .survival_part import CELLS, EDGES

    with _silent():
        data = load_flchain()
        group = np.where(data.X["age"].to_numpy() >= 70, CELLS[1], CELLS[0])
        release = release_survival_stats(
            data.time / 365.25, data.event, group, edges=EDGES, cells=CELLS, epsilon=1.0, delta=1e-6, rng=seed
        )
        model = survival_model(release)
        # the variables of the demo's laplace_nuts step: the same compiled graph
        step = pm.NUTS(model.continuous_value_vars, model=model, compile_kwargs=COMPILE)
        pm.sample(
            1, tune=1, chains=1, step=step, model=model, random_seed=seed, progressbar=False,
            compute_convergence_checks=False, compile_kwargs=AUXILIARY,
        )  # fmt: skip


def _compile_study(settings: dict, files: tuple, seed: int) -> None:
    """Compile the study's batched models: its design at one size and ε, one ADVI step."""
    from ..datasets import load_gdsc, make_gdsc_like
    from .drug_sensitivity import run_experiment

    with _silent():
        data = load_gdsc(*files) if files[0] is not None else make_gdsc_like(seed=seed)
        run_experiment(
            data,
            n_drugs=settings["drugs"],
            genes=settings["genes"],
            private_sizes=(max(settings["sizes"]),),
            epsilons=(settings["epsilons"][0],),
            repeats=settings["repeats"],
            n_public=settings["public"],
            advi_steps=1,
            seed=seed,
            progress=False,
            methods=settings["methods"],
        )
