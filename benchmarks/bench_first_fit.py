"""First fit of every model family on an empty compile cache and in a new process, against a plain
PyMC model of the same data, side by side.

For each entry and repeat, two new processes share a fresh PyTensor ``base_compiledir`` and
``NUMBA_CACHE_DIR``: the first compiles on the empty cache, the second is a new process with warm
caches.  Each process times

* ``import``: importing PyMC (and pm_private for its entries);
* ``build``: building the model from its data (the release is made before the clock starts);
* ``first draw``: from the call of ``pm.sample`` to its first draw (the compilation of the
  log-density and gradient, and the first NUTS step);
* ``fit``: build + the whole ``pm.sample(draws=1000, tune=1000, chains=2, cores=1,
  nuts_sampler="pymc")`` (the first fit as a user waits for it);
* ``fit cpu``: the process's CPU time over the first fit (the release's making included), a
  figure that a loaded machine inflates less than the wall time (the compilers run on one thread);
* ``refit``: in the same process, new data of the same shape (``set_*_stats`` or ``pm.set_data``)
  and ``pm.sample`` again.

Each pm_private entry names the plain entry it is compared with; the table gives the medians
over ``--repeats`` and the ratios of the medians to the plain model's.  Entries (d = 10):

* ``plain_linear`` / ``linear_model``: n = 3000 rows;
* ``plain_logistic`` / ``logistic_public`` (the default law of a release whose preprocessing
  came from 200 public rows: the reference law since 2026-12-03, the public rows' law before) /
  ``logistic_gaussian`` (``x_sample=None``): n = 5000;
* ``plain_poisson`` / ``poisson_model`` (likewise, 200 public rows): n = 5000, counts clipped at 10;
* ``plain_survival`` (piecewise-exponential hazards fitted by the Poisson trick on the
  person-interval rows) / ``survival_regression`` / ``survival_model`` (the exit table of two
  cells split at the first covariate's sign, noise-aware): n = 5000, J = 20 intervals;
* ``plain_weibull`` (``pm.Censored`` of ``pm.Weibull``) / ``weibull_model`` (the records' censored
  Weibull likelihood, not private): n = 5000 right-censored times;
* ``plain_discrete`` (logistic regression on the person-periods) / ``discrete_time_model`` (the
  records' discrete-time logit hazards, not private): the same records in q = 20 intervals, a
  spline baseline of 3 knots.

Add an entry to ``ENTRIES``: a function of a seed returning the model and a function that swaps
in new data of the same shape (seeded by its argument), and the plain entry it is compared with.

``--sampler nutpie`` samples with ``nuts_sampler="nutpie"`` instead, what ``pm.sample`` does
wherever nutpie is installed: nutpie compiles the model afresh at every call, so ``refit`` is then
the cost of one more ``pm.sample`` call in the same process, compilation included (nutpie takes no
callback: ``first draw`` is not measured).

Run ``python -m benchmarks.bench_first_fit`` (``--models``, ``--repeats`` (default 5),
``--draws``/``--tune``, ``--sampler``, ``--out`` JSON).  ``--record`` also writes the medians of the cold first fit of
each family it measured (and of its plain model) into ``pm_private/_engine/first_fit_seconds.json``,
which the library's compile notice quotes.  The machine's load (``uptime``) is printed before and
after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

D = 10
N_GLM = 5000
N_LINEAR = 3000
N_SURVIVAL = 5000
J_SURVIVAL = 20
PUBLIC_ROWS = 200
Y_BOUND = 10


def _covariates(rng, n):
    return rng.normal(size=(n, D)) / np.sqrt(D)


def _beta(rng):
    return rng.normal(size=D)


# ---------------------------------------------------------------- plain PyMC models


def _plain_regression(kind, n):
    """A plain PyMC regression on the n rows (data in pm.Data), and its refit."""
    import pymc as pm

    def data(seed):
        rng = np.random.default_rng(seed)
        X = _covariates(rng, n)
        eta = X @ _beta(rng)
        if kind == "linear":
            y = eta + 0.5 * rng.normal(size=n)
        elif kind == "logistic":
            y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(np.int64)
        else:
            y = rng.poisson(np.exp(0.5 + 0.3 * eta))
        return X, y

    X, y = data(0)
    with pm.Model() as model:
        Xd = pm.Data("X", X)
        yd = pm.Data("y", y)
        beta = pm.Normal("beta", 0.0, 2.5, shape=D)
        b = pm.Normal("intercept", 0.0, 2.5)
        eta = Xd @ beta + b
        if kind == "linear":
            sigma = pm.HalfNormal("sigma", 1.0)
            pm.Normal("obs", eta, sigma, observed=yd, shape=Xd.shape[0])
        elif kind == "logistic":
            pm.Bernoulli("obs", logit_p=eta, observed=yd, shape=Xd.shape[0])
        else:
            pm.Poisson("obs", pm.math.exp(eta), observed=yd, shape=Xd.shape[0])

    def refit(seed):
        X, y = data(seed)
        pm.set_data({"X": X, "y": y}, model=model)

    return model, refit


def _survival_data(seed):
    rng = np.random.default_rng(seed)
    X = _covariates(rng, N_SURVIVAL)
    T = rng.exponential(1.0 / (0.8 * np.exp(X @ (0.5 * _beta(rng)))))
    C = rng.uniform(0, 2, N_SURVIVAL)
    return np.minimum(T, C), (T <= C).astype(np.int64), X


EDGES = np.linspace(0, 1.5, J_SURVIVAL + 1)[1:]


def _person_intervals(time_, event, X):
    """The Poisson trick's rows: one per person and interval at risk (exposure, event, interval, row)."""
    starts = np.concatenate([[0.0], EDGES[:-1]])
    time_ = np.minimum(time_, EDGES[-1])
    event = np.where(time_ >= EDGES[-1], 0, event)
    at_risk = time_[:, None] > starts[None, :]
    person, interval = np.nonzero(at_risk)
    exposure = np.minimum(time_[person], EDGES[interval]) - starts[interval]
    last = np.searchsorted(EDGES, time_[person], side="left") == interval
    return exposure, (event[person] * last).astype(np.int64), interval, X[person]


def _plain_survival(seed):
    """Piecewise-exponential proportional hazards by the Poisson trick, plain PyMC."""
    import pymc as pm

    exposure, events, interval, rows = _person_intervals(*_survival_data(seed))
    with pm.Model() as model:
        e = pm.Data("exposure", exposure)
        k = pm.Data("interval", interval)
        Xd = pm.Data("X", rows)
        yd = pm.Data("events", events)
        log_h0 = pm.Normal("log_baseline", 0.0, 3.0, shape=J_SURVIVAL)
        beta = pm.Normal("beta", 0.0, 1.0, shape=D)
        rate = e * pm.math.exp(log_h0[k] + Xd @ beta)
        pm.Poisson("obs", rate, observed=yd, shape=Xd.shape[0])

    def refit(seed):
        exposure, events, interval, rows = _person_intervals(*_survival_data(seed))
        pm.set_data({"exposure": exposure, "interval": interval, "X": rows, "events": events}, model=model)

    return model, refit


def _weibull_records(seed):
    """n = 5000 Weibull (shape 1.5) times, accelerated by exp(xᵀβ/2), censored uniformly on [0, 2]."""
    rng = np.random.default_rng(seed)
    X = _covariates(rng, N_SURVIVAL)
    T = rng.weibull(1.5, N_SURVIVAL) * np.exp(0.5 * X @ _beta(np.random.default_rng(0)))
    C = rng.uniform(0, 2, N_SURVIVAL)
    return np.minimum(T, C), (T <= C).astype(np.int64), X


def _plain_weibull(seed):
    """Weibull accelerated-failure-time regression with right-censoring, plain PyMC (``pm.Censored``),
    with the priors of :func:`pm_private.survival.weibull_model`."""
    import pymc as pm

    def upper(time_, event):  # an event is observed below +inf; a censored time at its bound
        return np.where(event == 1, np.inf, time_)

    time_, event, X = _weibull_records(seed)
    with pm.Model() as model:
        t = pm.Data("time", time_)
        bound = pm.Data("upper", upper(time_, event))
        Xd = pm.Data("X", X)
        p = pm.math.exp(pm.Normal("log_p", 0.0, 1.0))
        lam = pm.math.exp(pm.Normal("intercept", 0.0, 5.0) + Xd @ pm.Normal("beta", 0.0, 2.0, shape=D))
        pm.Censored("t", pm.Weibull.dist(alpha=p, beta=lam), lower=None, upper=bound, observed=t, shape=Xd.shape[0])

    def refit(seed):
        time_, event, X = _weibull_records(seed)
        pm.set_data({"time": time_, "upper": upper(time_, event), "X": X}, model=model)

    return model, refit


Q_DISCRETE = 20


def _discrete_records(seed):
    """The Weibull records' times scaled into [0, 1] (by 2, their censoring bound) as q = 20 intervals,
    with the model's default spline basis (e = 3 knots)."""
    from pm_private.survival import DiscreteTimeData

    time_, event, X = _weibull_records(seed)
    return DiscreteTimeData.from_times(X, time_ / 2.0, event, q=Q_DISCRETE)


def _person_periods(data):
    """The logistic regression's rows of discrete-time records (:func:`pm_private.survival.expand_person_period`):
    the baseline basis rows, the covariate rows and the outcomes."""
    from pm_private.survival import expand_person_period

    design, response = expand_person_period(data)
    return design[:, : data.e], design[:, data.e :], response.astype(np.int64)


def _plain_discrete(seed):
    """Discrete-time logit hazards by logistic regression on person-periods, plain PyMC, with the
    priors and spline baseline of :func:`pm_private.survival.discrete_time_model`."""
    import pymc as pm

    data = _discrete_records(seed)
    basis_rows, rows, outcome = _person_periods(data)
    with pm.Model() as model:
        Ad = pm.Data("basis_rows", basis_rows)
        Xd = pm.Data("X", rows)
        yd = pm.Data("outcome", outcome)
        eta = Ad @ pm.Normal("alpha", 0.0, 10.0, shape=data.e) + Xd @ pm.Normal("beta", 0.0, 10.0, shape=D)
        pm.Bernoulli("obs", logit_p=eta, observed=yd, shape=Xd.shape[0])

    def refit(seed):
        basis_rows, rows, outcome = _person_periods(_discrete_records(seed))
        pm.set_data({"basis_rows": basis_rows, "X": rows, "outcome": outcome}, model=model)

    return model, refit


# ---------------------------------------------------------------- pm_private models


def _glm_release(kind, seed, public):
    import pm_private as pp

    rng = np.random.default_rng(seed)
    X = _covariates(rng, N_GLM)
    eta = X @ _beta(np.random.default_rng(0))
    prep = pp.Preprocessing.from_public(_covariates(np.random.default_rng(99), PUBLIC_ROWS)) if public else None
    common = dict(epsilon=1.0, delta=1e-6, x_bound=4.5 if public else 3.0, preprocessing=prep, rng=seed + 1)
    if kind == "logistic":
        y = rng.uniform(size=N_GLM) < 1 / (1 + np.exp(-eta))
        return pp.release_logistic_stats(X, y, **common)
    counts = rng.poisson(np.exp(0.5 + 0.3 * eta))
    return pp.release_poisson_stats(X, counts, y_bound=Y_BOUND, **common)


def _glm(kind, public):
    def build(seed):
        from pm_private.logistic.model import logistic_model, set_logistic_stats
        from pm_private.poisson.model import poisson_model, set_poisson_stats

        release = _glm_release(kind, seed, public)
        start = time.perf_counter()
        fit, swap = (logistic_model, set_logistic_stats) if kind == "logistic" else (poisson_model, set_poisson_stats)
        model = fit(release) if public else fit(release, x_sample=None)

        def refit(seed):
            new = _glm_release(kind, seed, public)
            swap(new, model) if public else swap(new, model, x_sample=None)

        return model, refit, start

    return build


def _linear_release(seed):
    import pm_private as pp

    rng = np.random.default_rng(seed)
    X = _covariates(rng, N_LINEAR)
    y = X @ _beta(np.random.default_rng(0)) + 0.5 * rng.normal(size=N_LINEAR)
    return pp.release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=4.0, rng=seed + 1)


def _linear(seed):
    import pm_private as pp
    from pm_private.linear.model import set_linear_stats

    release = _linear_release(seed)
    start = time.perf_counter()
    model = pp.linear_model(release)
    return model, lambda s: set_linear_stats(_linear_release(s), model), start


def _survival_release(seed):
    import pm_private as pp

    time_, event, X = _survival_data(seed)
    return pp.release_survival_regression_stats(
        time_, event, X, edges=EDGES, x_bound=3.0, epsilon=1.0, delta=1e-6, rng=seed + 1
    )


def _survival_regression(seed):
    import pm_private as pp
    from pm_private.survival.regression.model import set_survival_regression_stats

    release = _survival_release(seed)
    start = time.perf_counter()
    model = pp.survival_regression_model(release)
    return model, lambda s: set_survival_regression_stats(_survival_release(s), model), start


def _exit_release(seed):
    import pm_private as pp

    time_, event, X = _survival_data(seed)
    arm = np.where(X[:, 0] > 0, "high", "low")
    return pp.release_survival_stats(
        time_, event, arm, edges=EDGES, cells=["low", "high"], epsilon=1.0, delta=1e-6, rng=seed + 1
    )


def _exit_table(seed):
    import pm_private as pp
    from pm_private.survival import set_survival_stats

    release = _exit_release(seed)
    start = time.perf_counter()
    model = pp.survival_model(release)
    return model, lambda s: set_survival_stats(_exit_release(s), model), start


def _weibull(seed):
    import pymc as pm

    from pm_private.survival import weibull_model

    time_, event, X = _weibull_records(seed)
    start = time.perf_counter()
    model = weibull_model(time_, event, X, censoring=2.0)

    def refit(seed):
        time_, event, X = _weibull_records(seed)
        pm.set_data({"survival": np.column_stack([time_, event.astype(np.float64)]), "X": X}, model=model)

    return model, refit, start


def _discrete(seed):
    import pymc as pm

    from pm_private.survival import discrete_time_model

    data = _discrete_records(seed)
    start = time.perf_counter()
    model = discrete_time_model(data)

    def refit(seed):
        new = _discrete_records(seed)
        pm.set_data({"X": new.X, "survival": np.column_stack([new.interval, new.event]).astype(np.int32)}, model=model)

    return model, refit, start


def _timed(make):
    """A plain builder timed from its call (its data are made inside, cheap against the fit)."""

    def build(seed):
        start = time.perf_counter()
        model, refit = make(seed)
        return model, refit, start

    return build


#: name -> (builder of (model, refit, build start) from a seed, the plain entry it is compared with)
ENTRIES = {
    "plain_linear": (_timed(lambda s: _plain_regression("linear", N_LINEAR)), None),
    "linear_model": (_linear, "plain_linear"),
    "plain_logistic": (_timed(lambda s: _plain_regression("logistic", N_GLM)), None),
    "logistic_public": (_glm("logistic", True), "plain_logistic"),
    "logistic_gaussian": (_glm("logistic", False), "plain_logistic"),
    "plain_poisson": (_timed(lambda s: _plain_regression("poisson", N_GLM)), None),
    "poisson_model": (_glm("poisson", True), "plain_poisson"),
    "plain_survival": (_timed(_plain_survival), None),
    "survival_regression": (_survival_regression, "plain_survival"),
    "survival_model": (_exit_table, "plain_survival"),
    "plain_weibull": (_timed(_plain_weibull), None),
    "weibull_model": (_weibull, "plain_weibull"),
    "plain_discrete": (_timed(_plain_discrete), None),
    "discrete_time_model": (_discrete, "plain_discrete"),
}


#: The family whose compile notice quotes an entry (its default model), and the plain model's words.
RECORDED = {
    "linear_model": ("linear", "linear regression"),
    "logistic_public": ("logistic", "logistic regression"),
    "poisson_model": ("poisson", "Poisson regression"),
    "survival_regression": ("survival_regression", "piecewise-exponential survival regression"),
    "survival_model": ("survival", "piecewise-exponential survival regression"),
    "weibull_model": ("weibull", "Weibull AFT regression with censoring"),
    "discrete_time_model": ("discrete_time", "person-period logistic regression"),
}


# ---------------------------------------------------------------- one process


def child(name: str, draws: int, tune: int, sampler: str = "pymc") -> dict:
    """Build, first fit and refit of ``name`` in this process with ``sampler``: the wall times."""
    start = time.perf_counter()
    import logging
    import warnings

    import pymc as pm

    if not name.startswith("plain_"):
        import pm_private  # noqa: F401

    warnings.filterwarnings("ignore")
    logging.getLogger("pm_private").setLevel(logging.WARNING)
    logging.getLogger("pymc").setLevel(logging.WARNING)
    imported = time.perf_counter()
    cpu_start = time.process_time()
    model, refit, build_start = ENTRIES[name][0](0)
    built = time.perf_counter()
    first = []

    def callback(trace, draw):
        if not first:
            first.append(time.perf_counter())

    kwargs = dict(draws=draws, tune=tune, chains=2, cores=1, nuts_sampler=sampler, progressbar=False)
    watch = {"callback": callback} if sampler == "pymc" else {}
    sample_start = time.perf_counter()
    with model:
        pm.sample(random_seed=1, **watch, **kwargs)
    done = time.perf_counter()
    cpu_fit = time.process_time() - cpu_start
    refit(7)
    with model:
        pm.sample(random_seed=2, **kwargs)
    again = time.perf_counter()
    return {
        "import": imported - start,
        "build": built - build_start,
        "first_draw": first[0] - sample_start if first else float("nan"),
        "fit": built - build_start + done - sample_start,
        "fit_cpu": cpu_fit,
        "refit": again - done,
    }


def run_pair(name: str, args) -> list[dict | None]:
    """The cold and the warm process of ``name`` on one fresh pair of cache directories."""
    out = []
    with tempfile.TemporaryDirectory(prefix="first_fit_") as cache:
        env = dict(
            os.environ,
            PYTENSOR_FLAGS=f"base_compiledir={cache}/pytensor",
            NUMBA_CACHE_DIR=f"{cache}/numba",
        )
        for _ in range(2):
            command = [sys.executable, "-m", "benchmarks.bench_first_fit", "--child", name]
            command += ["--draws", str(args.draws), "--tune", str(args.tune), "--sampler", args.sampler]
            try:
                done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                print(f"{name}: over --timeout {args.timeout} s", file=sys.stderr)
                out.append(None)
                continue
            if done.returncode != 0:
                print(f"{name} failed:\n{done.stderr[-3000:]}", file=sys.stderr)
                out.append(None)
                continue
            out.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return out


FIGURES = ("first_draw", "fit", "fit_cpu", "refit")


def _median(runs, which, key):
    values = [r[which][key] for r in runs if r[which] is not None]
    return statistics.median(values) if values else float("nan")


def table(results: dict) -> list[str]:
    """Markdown rows: medians (cold, warm) and ratios to the plain model's medians."""
    header = (
        "| model | cold build s | cold first draw s | cold fit s | cold fit cpu s | warm first draw s | warm fit s "
        "| refit s | cold fit ratio | cold cpu ratio | warm fit ratio | refit ratio |"
    )
    lines = [header, "|" + "---|" * 12]
    for name, runs in results.items():
        med = {(w, k): _median(runs, w, k) for w in (0, 1) for k in ("build", *FIGURES)}
        plain = ENTRIES[name][1]
        ratios = ["", "", "", ""]
        if plain in results:
            base = results[plain]
            pairs = [(0, "fit"), (0, "fit_cpu"), (1, "fit"), (1, "refit")]
            ratios = [f"{med[pair] / _median(base, *pair):.2f}" for pair in pairs]
        cells = [med[(0, "build")], med[(0, "first_draw")], med[(0, "fit")], med[(0, "fit_cpu")]]
        cells += [med[(1, "first_draw")], med[(1, "fit")], med[(1, "refit")]]
        lines.append(f"| {name} | " + " | ".join(f"{c:.1f}" for c in cells) + " | " + " | ".join(ratios) + " |")
    return lines


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", choices=list(ENTRIES), default=list(ENTRIES))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--sampler", choices=("pymc", "nutpie"), default="pymc", help="pm.sample's nuts_sampler")
    parser.add_argument("--out", help="write the runs, the table and the load as JSON")
    parser.add_argument("--record", action="store_true", help="write the cold first fits for the compile notice")
    parser.add_argument("--child", metavar="MODEL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.draws, args.tune, args.sampler)))
        return
    if args.record and args.sampler != "pymc":
        parser.error("--record writes PyMC's NUTS figures, which the compile notice quotes: omit --sampler")
    load_before = _uptime()
    print(f"load before: {load_before}", flush=True)
    results = {name: [] for name in args.models}
    for repeat in range(args.repeats):
        for name in args.models:  # interleaved: load drifts alike for a model and its baseline
            cold, warm = run_pair(name, args)
            results[name].append({0: cold, 1: warm})
            cells = [" ".join(f"{k} {v:.1f}" for k, v in r.items()) if r else "failed" for r in (cold, warm)]
            print(f"repeat {repeat}: {name}: cold process {cells[0]}; warm process {cells[1]} (s)", flush=True)
    lines = table(results)
    load_after = _uptime()
    print("\n".join(lines))
    print(f"load after: {load_after}", flush=True)
    if args.out:
        with open(args.out, "w") as handle:
            json.dump({"load": [load_before, load_after], "table": lines, "runs": results}, handle, indent=1)
    if args.record:
        record(results, args.repeats, [load_before, load_after])


def record(results: dict, repeats: int, load: list[str]) -> None:
    """Merge the medians of the cold first fits of the measured families (with their plain models)
    into the record the compile notice reads."""
    from pm_private._engine.compile_notice import RECORD

    previous = json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.exists() else {}
    families = previous.get("families", {})
    machine = f"{os.cpu_count()} cores, load {load[0].rsplit('load average:', 1)[-1].split(',')[0].strip()}, "
    machine += f"median of {repeats}, {time.strftime('%Y-%m-%d')}"
    for name, (family, words) in RECORDED.items():
        plain = ENTRIES[name][1]
        if name in results and plain in results:
            cold, plain_cold = _median(results[name], 0, "fit"), _median(results[plain], 0, "fit")
            if cold == cold and plain_cold == plain_cold:  # both measured (not NaN)
                families[family] = {
                    "cold": round(cold, 1),
                    "plain_cold": round(plain_cold, 1),
                    "plain": words,
                    "machine": machine,
                }
    out = {"benchmark": "python -m benchmarks.bench_first_fit --record", "families": families}
    RECORD.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
