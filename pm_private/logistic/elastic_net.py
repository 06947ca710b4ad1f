"""ε-DP elastic-net logistic regression by objective perturbation (Yu et al. 2014, Alg. 1, Thm 3.1).

The released coefficients minimise (Yu et al. 2014, §2–§4)

    L(θ) = (1/n) Σᵢ log(1 + exp(−yᵢ θᵀxᵢ)) + ½λ(1−α)‖θ‖² + λα‖θ‖₁ + (Δ/2)‖θ‖² + (φ/(εn)) bᵀθ

over θ ∈ ℝˢ, with yᵢ ∈ {−1, 1} and the public quantities

* κ: rows are clipped to ‖x‖_j ≤ κ (j = 1 for noise B₁, j = 2 for B₂); with an intercept a
  constant 1 is appended after clipping, so the gradient bound is κ_j = κ + 1 (ℓ1) or
  √(κ² + 1) (ℓ2);
* φ = 2κ_j, the smallest value Alg. 1 allows (φ ≥ 2κ_j);
* c = (κ² + 1)/4 (κ²/4 without intercept), the bound on the largest singular value of the
  per-record Hessian σ(1−σ)xxᵀ;
* convex_min = c / (n(e^{ε/4} − 1)), the strong convexity Alg. 1 requires of the regulariser;
* Δ = max{0, convex_min − λ(1−α)}, the extra ridge term of Yu et al. (2014) Thm 2.1, added only
  with ``too_weak="add_ridge"``; by default a too weak penalty is refused (ValueError);
* b ~ B₁ (iid Laplace(0, 2), density ∝ exp(−‖b‖₁/2), the default and more accurate, §3.1)
  or B₂ (density ∝ exp(−‖b‖₂/2): uniform direction times a Gamma(s, 2) = χ²(2s) radius, Prop 1).

Privacy (Thm 3.1, proof in Yu et al. (2014) App. A.2): the output density ratio of two data sets that
differ in one record is at most exp(κ_jε/φ)·(1 + c/(nλ'))² ≤ e^{ε/2}·e^{ε/2} = e^ε, where λ' is
the regulariser's strong convexity λ(1−α) + Δ ≥ convex_min.  **ε-DP** under replace-one
neighbours (bounded DP: n is public); κ, λ, α, the noise kind and n are public.  The ℓ1 term
is not differentiable; the proof covers it by the successive-approximation argument of Kifer,
Smith & Thakurta (2012) that the paper cites.  The intercept is ridge-penalised (strong
convexity needs it) but not ℓ1-penalised.

Where this module departs from the paper, and why:

* c = κ²/4, not κ²: the Hessian of the logistic loss is σ(1−σ)xxᵀ with σ(1−σ) ≤ 1/4, so its
  largest singular value is ≤ ‖x‖₂²/4 (Chaudhuri, Monteleoni & Sarwate 2011 use c = 1/4 for
  ‖x‖ ≤ 1).  Yu et al. (2014) §4 bounds the nuclear norm of xxᵀ without the 1/4; that is valid but
  four times more conservative.  The test suite checks the bound and its tightness.
* The guarantee is for the exact minimiser.  The solver (:mod:`pm_private.logistic.proximal`) stops when
  the KKT residual is ≤ ``tol`` (default 1e-10), with a step size set by the public Hessian
  bound c; the remaining float-level gap is not covered by the theorem.  If it does not converge
  within ``max_iter`` iterations it raises :class:`~pm_private.privacy.release.ConvergenceError`
  **after charging ε** (budget reservation): the failure depends on the data and the noise, so
  it must not be retriable for free.  Nothing else about the solve (iterations, residual) is
  released.
"""

from __future__ import annotations

import inspect
import sys
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..privacy.accountant import PrivacyAccountant
from ..privacy.noise import NoiseSource, as_noise_source
from ..privacy.primitives import project_rows
from ..privacy.release import release_guard
from ..privacy.validation import (
    MIN_EPSILON,
    check_bool,
    check_bound,
    check_count,
    check_epsilon,
    check_positive,
)
from .objective_perturbation import (
    MECHANISM,
    NOISE_KINDS,
    ElasticNetRelease,
    _minimise_perturbed_objective,
    check_noise,
    check_penalty,
    convex_min,
    design_bounds,
    perturbation_noise,
    prepare_design,
    to_signed_labels,
)

__all__ = [
    "MECHANISM",
    "NOISE_KINDS",
    "ElasticNetRelease",
    "DPElasticNetLogisticRegression",
    "check_noise",
    "check_penalty",
    "clip_to_release",
    "convex_min",
    "design_bounds",
    "perturbation_noise",
    "prepare_design",
    "to_signed_labels",
]


def _inside_model_selection() -> bool:
    """True when scikit-learn's model selection (a search, a cross-validation, a validation or
    learning curve) is on the call stack.  Every such tool fits through
    ``sklearn.model_selection``'s functions, in this process or, with ``n_jobs``, in the worker
    that runs them, so the stack is a signal that needs no cooperation from the caller."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("sklearn.model_selection"):
            return True
        frame = frame.f_back
    return False


# The prediction rule of a logistic point model from its scores s (``decision_function``): the
# label probabilities 1 − σ(s), σ(s) and the label, positive where s > 0.  The classifier and the
# data-perturbation release bind these two in their class bodies (so that each class's API page
# lists them), with their own ``decision_function`` and ``_labels`` (the two label values, the
# positive one last).


def _predict_proba(self, X) -> np.ndarray:
    """Probabilities of the two labels (rows clipped as in :meth:`decision_function`).

    Post-processing of the release: no privacy cost.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite rows.

    Returns
    -------
    numpy.ndarray of shape (n_samples, 2)
        Columns in the order of the labels: ``classes_`` for the classifier, 0 then 1 for a
        release.
    """
    p = expit(self.decision_function(X))
    return np.column_stack([1 - p, p])


def _predict(self, X) -> np.ndarray:
    """Predicted labels (rows clipped as in :meth:`decision_function`).

    Post-processing of the release: no privacy cost.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite rows.

    Returns
    -------
    numpy.ndarray of shape (n_samples,)
        The positive label where the score is positive, else the other: values of ``classes_``
        for the classifier, the integers 0 and 1 for a release.
    """
    positive = self.decision_function(X) > 0
    return self._labels()[positive.astype(int)]


class DPElasticNetLogisticRegression(ClassifierMixin, BaseEstimator):
    """ε-DP logistic regression with elastic-net penalty ½λ(1−α)‖θ‖² + λα‖θ‖₁ (Yu et al. 2014, Alg. 1).

    A scikit-learn classifier whose ``fit`` is one release by objective perturbation: it
    minimises the penalised mean logistic loss plus the random linear term (φ/(εn))·bᵀθ (module
    docstring), and keeps only the minimiser.  Binary labels only.

    Privacy: **ε-DP** (pure) for the secure default ``rng=None``, under replace-one neighbours
    (bounded DP: the number of records n is public), by Yu et al. (2014) Thm 3.1, which extends
    the objective perturbation of Chaudhuri, Monteleoni & Sarwate (2011) to the elastic-net
    penalty.  Public: ``epsilon``, ``lam``, ``alpha``, ``x_bound``, ``noise``,
    ``fit_intercept``, n, the number of features, their names (``feature_names_in_``) and the two
    label values (``classes_``).  The guarantee is exact for the exact minimiser; the solver
    stops at a KKT residual ≤ ``tol``, and that float-level gap is not covered by the theorem.
    The Laplace (B₁) and Gamma-radius (B₂) noise is drawn from 53-bit uniforms of the operating
    system's generator; like all floating-point samplers it is not hardened against the
    attacks of Mironov (2012) on the low-order bits, and the noise vector itself is never
    released.  It stays floating point by necessity: the proof maps the noise density through
    the minimiser's change of variables, which needs a continuous density, and OpenDP's exact
    samplers are discrete.  A seeded ``rng`` makes the fit reproducible and gives **no** guarantee
    (``privacy_.private`` is then False).  ``accountant`` is charged ε once per ``fit``; invalid
    arguments are refused before the charge, and a fit that does not converge raises
    :class:`~pm_private.privacy.ConvergenceError` after the charge (the failure
    depends on the data, so it must not be retriable for free).

    Model selection.  Every ``fit`` is a release: a ``GridSearchCV`` over k candidates with
    5 folds is 5k + 1 fits on overlapping records, and costs up to (5k + 1)·ε by sequential
    composition (Dwork & Roth 2014, Thm 3.16).  A ``fit`` without an accountant that runs inside
    scikit-learn's model selection (``sklearn.model_selection`` on the call stack:
    ``GridSearchCV``, ``RandomizedSearchCV``, ``cross_validate``, ``cross_val_score``,
    ``validation_curve``, …) warns (``UserWarning``), since nothing then records that cost; pass
    an accountant to count it, or use :func:`pm_private.logistic.select_penalty`, which selects
    the penalty privately within one budget.

    Parameters
    ----------
    epsilon : float, default 1.0
        ε of one fit, ≥ 10⁻⁶ and finite.
    lam : float, default 1.0
        Penalty strength λ > 0.
    alpha : float, default 0.5
        ℓ1 share α ∈ [0, 1] of the penalty.
    x_bound : float, default 1.0
        Public κ > 0: training rows are scaled onto the ball ‖x‖₁ ≤ κ (``noise="laplace"``) or
        ‖x‖₂ ≤ κ (``noise="l2"``), and so are the rows given to the prediction methods.
    noise : {"laplace", "l2"}, default "laplace"
        Noise B₁ (iid Laplace, the more accurate, Yu et al. 2014 §3.1) or B₂ (density
        ∝ exp(−‖b‖₂/2)).
    fit_intercept : bool, default True
        Append a constant-1 column (ridge- but not ℓ1-penalised).
    too_weak : {"raise", "add_ridge"}, default "raise"
        What to do if λ(1−α) is below the strong convexity the guarantee needs (module
        docstring): refuse with ValueError, or add the extra ridge term of Yu et al. (2014)
        Thm 2.1.
    tol : float, default 1e-10
        KKT tolerance of the solver, > 0.
    max_iter : int, default 100000
        Iteration cap of the solver, ≥ 1.
    accountant : PrivacyAccountant, optional
        Charged ε once per ``fit`` (refused before any noise is drawn if over budget).  Clones
        made by ``sklearn.base.clone`` (grid searches, cross-validation) share it.
    rng : None, int, numpy.random.Generator or NoiseSource, optional
        None (default) draws secure noise; anything else is seeded and not private.
    classes : array-like of shape (2,), optional
        The public label set.  By default the labels found in ``y``, which must then hold
        exactly two values (one-class data are refused before the charge); give the label set
        when ``y`` may hold only one of them, or when the label values must not come from the
        data.
    norm_bound : float, optional
        The former name of ``x_bound``, accepted with a ``FutureWarning`` for one release; giving
        both (``x_bound`` away from its default) is a ``TypeError``, raised before any charge.

    Attributes
    ----------
    coef_ : numpy.ndarray of shape (n_features,)
        Released coefficients θ (without the intercept).
    intercept_ : float
        Released intercept (0.0 without ``fit_intercept``).
    classes_ : numpy.ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : numpy.ndarray of shape (n_features,)
        Column names of ``X``, when ``fit`` was given a DataFrame with string column names.
    privacy_ : ElasticNetRelease
        The release: coefficients, ε and the public constants it assumed.

    See Also
    --------
    pm_private.logistic.select_penalty : Private choice of λ on a public grid.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private.logistic import DPElasticNetLogisticRegression
    >>> from pm_private.privacy import PrivacyAccountant
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3))
    >>> y = (X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=500) > 0).astype(int)
    >>> accountant = PrivacyAccountant(epsilon=2.0)
    >>> model = DPElasticNetLogisticRegression(
    ...     epsilon=1.0, lam=0.05, x_bound=3.0, accountant=accountant, rng=1
    ... ).fit(X, y)
    >>> model.classes_, model.n_features_in_
    (array([0, 1]), 3)
    >>> bool(model.score(X, y) > 0.8), accountant.spent
    (True, Budget(epsilon=1.0, delta=0.0))
    >>> model.privacy_.private  # seeded: reproducible, no guarantee
    False
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, MIN_EPSILON, None, closed="left")],
        "lam": [Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, 1, closed="both")],
        "x_bound": [Interval(Real, 0, None, closed="neither")],
        "noise": [StrOptions(set(NOISE_KINDS))],
        "fit_intercept": ["boolean"],
        "too_weak": [StrOptions({"raise", "add_ridge"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "classes": ["array-like", None],
        "accountant": [PrivacyAccountant, None],
        "rng": [Interval(Integral, 0, None, closed="left"), np.random.Generator, NoiseSource, None],
        "norm_bound": [Interval(Real, 0, None, closed="neither"), Hidden(StrOptions({"deprecated"}))],
    }

    def __init__(
        self,
        epsilon: float = 1.0,
        lam: float = 1.0,
        alpha: float = 0.5,
        x_bound: float = 1.0,
        noise: str = "laplace",
        fit_intercept: bool = True,
        too_weak: str = "raise",
        tol: float = 1e-10,
        max_iter: int = 100_000,
        accountant=None,
        rng=None,
        classes=None,
        norm_bound="deprecated",
    ):
        self.epsilon = epsilon
        self.lam = lam
        self.alpha = alpha
        self.x_bound = x_bound
        self.noise = noise
        self.fit_intercept = fit_intercept
        self.too_weak = too_weak
        self.tol = tol
        self.max_iter = max_iter
        self.accountant = accountant
        self.rng = rng
        self.classes = classes
        self.norm_bound = norm_bound

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.non_deterministic = self.rng is None  # secure noise: every fit is a fresh draw
        return tags

    # release ---------------------------------------------------------------------------------
    def _x_bound(self) -> tuple[str, object]:
        """(name, value) of the covariate bound: ``x_bound``, or the deprecated ``norm_bound`` where
        one was given (with a FutureWarning), so that a refusal names the argument the caller typed.
        Both given (``x_bound`` away from its default) is a TypeError, as for the functions."""
        if isinstance(self.norm_bound, str) and self.norm_bound == "deprecated":
            return "x_bound", self.x_bound
        default = inspect.signature(type(self)).parameters["x_bound"].default
        if not (isinstance(self.x_bound, float | int) and self.x_bound == default):  # not given
            raise TypeError("DPElasticNetLogisticRegression got both 'norm_bound' and its new name 'x_bound'")
        warnings.warn(
            "DPElasticNetLogisticRegression: the parameter 'norm_bound' is now 'x_bound'; 'norm_bound' will be "
            "removed in the next release",
            FutureWarning,
            stacklevel=3,
        )
        return "norm_bound", self.norm_bound

    def _checked(self, n: int) -> tuple:
        """Validate the public parameters; return (ε, λ, α, κ, j, κ_j, c, convex_min, Δ)."""
        epsilon = check_epsilon(self.epsilon)
        lam, alpha = check_penalty(self.lam, self.alpha)
        kappa = check_bound(*self._x_bound())
        norm = check_noise(self.noise)
        check_bool("fit_intercept", self.fit_intercept)
        check_positive("tol", self.tol)
        check_count("max_iter", self.max_iter)
        if self.too_weak not in ("raise", "add_ridge"):
            raise ValueError(f"too_weak must be 'raise' or 'add_ridge', got {self.too_weak!r}")
        kappa_j, c = design_bounds(kappa, norm, self.fit_intercept)
        required = convex_min(epsilon, n, c)
        strength = lam * (1.0 - alpha)
        if strength < required and self.too_weak == "raise":
            floor = "no λ works with alpha = 1" if alpha == 1 else f"λ ≥ {required / (1 - alpha):.6g}"
            raise ValueError(
                f"penalty too weak for ε-DP: λ(1−α) = {strength:.6g} < c/(n(e^(ε/4)−1)) = {required:.6g} "
                f"(c = {c:g}, n = {n}, ε = {epsilon:g}); need {floor}, or too_weak='add_ridge'"
            )
        extra = max(0.0, required - strength)
        return epsilon, lam, alpha, kappa, norm, kappa_j, c, required, extra

    def fit(self, X, y) -> DPElasticNetLogisticRegression:
        """Release ε-DP coefficients for (X, y) (one charge of ε to ``accountant``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private records (finite); rows are scaled onto the public ``x_bound`` ball.
        y : array-like of shape (n_samples,)
            Private binary labels: two distinct values, or values of ``classes``.

        Returns
        -------
        DPElasticNetLogisticRegression
            The estimator, holding the release (``coef_``, ``intercept_``, ``privacy_``).

        Raises
        ------
        ValueError
            Invalid arguments, records or labels, or a penalty too weak for the guarantee (with
            ``too_weak="raise"``); raised before ε is charged.
        BudgetExceededError
            The accountant's remaining budget is below ε; nothing is charged.
        ConvergenceError
            The solver did not reach ``tol`` in ``max_iter`` iterations; ε **was** charged.
        """
        for name in ("coef_", "intercept_", "classes_", "privacy_"):
            self.__dict__.pop(name, None)  # a failed refit must not leave the previous model behind
        self._validate_params()
        X, y = _checked_input(self, X, y, reset=True)
        classes, y = _binary_labels(y, self.classes)
        n = X.shape[0]
        epsilon, lam, alpha, kappa, norm, kappa_j, c, required, extra = self._checked(n)
        design = prepare_design(X, kappa, norm, self.fit_intercept)
        source = as_noise_source(self.rng)
        phi = 2.0 * kappa_j
        if self.accountant is None and _inside_model_selection():
            warnings.warn(
                "DPElasticNetLogisticRegression.fit runs inside scikit-learn model selection without an "
                "accountant: every fit (each candidate on each fold, and the refit) is an ε-DP release on "
                "overlapping records, so the cost adds up (sequential composition) and nothing records it. "
                "Pass accountant=PrivacyAccountant(...) to count it, or select the penalty with "
                "pm_private.logistic.select_penalty",
                UserWarning,
                stacklevel=2,
            )

        def record(theta):
            coef, intercept = _split_theta(theta, self.fit_intercept)
            return ElasticNetRelease(
                coef=coef,
                intercept=intercept,
                epsilon=epsilon,
                noise=self.noise,
                x_bound=kappa,
                phi=phi,
                hessian_bound=c,
                convex_min=required,
                extra_ridge=extra,
                lam=lam,
                alpha=alpha,
                n=n,
                private=source.secure,
            )

        record(np.zeros(design.shape[1]))  # the record's own checks, before anything is spent
        with release_guard(self.accountant, MECHANISM, epsilon, label="DP elastic-net logistic"):
            b = perturbation_noise(design.shape[1], self.noise, source)
            result = _minimise_perturbed_objective(
                design,
                y,
                lam,
                alpha,
                extra,
                phi / (epsilon * n) * b,
                fit_intercept=self.fit_intercept,
                hessian_bound=c,
                tol=self.tol,
                max_iter=self.max_iter,
            )
            release = record(result.theta[:, 0])
        self._hold(release, classes)
        return self

    def _hold(self, release: ElasticNetRelease, classes: np.ndarray) -> None:
        """Keep ``release`` as the fitted model (the only data-dependent state)."""
        self.coef_ = release.coef.copy()  # writable, as before; privacy_.coef stays read-only
        self.intercept_ = release.intercept
        self.classes_ = classes
        self.privacy_ = release

    # prediction --------------------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """θᵀx̃ + intercept, with x̃ the row scaled onto the release's public ball.

        Rows are mapped as the training rows were: scaled onto ‖x‖₁ ≤ κ (B₁) or ‖x‖₂ ≤ κ (B₂)
        where they lie outside.  Post-processing of the release: no privacy cost.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite rows.

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
            Scores; positive means ``classes_[1]``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            Rows that are not finite, or a number of features other than ``n_features_in_``.
        """
        check_is_fitted(self, "privacy_")
        X = _checked_input(self, X, reset=False)
        return clip_to_release(X, self.privacy_) @ self.coef_ + self.intercept_

    predict_proba = _predict_proba
    predict = _predict

    def _labels(self) -> np.ndarray:
        """The two labels, the positive one last: ``classes_``."""
        return self.classes_


def clip_to_release(X: np.ndarray, release) -> np.ndarray:
    """New rows mapped as a logistic release's training rows were: scaled onto its public ball.

    The one prediction rule of the logistic releases (as for the linear models'
    :func:`pm_private.linear.predict_linear`): a row with ‖x‖ > κ is scaled to norm κ, in the norm the
    mechanism clipped in (ℓ1 for objective perturbation with B₁ noise, ℓ2 for B₂ and for the
    data-perturbation baseline); other rows are unchanged.
    """
    norm = NOISE_KINDS[release.noise] if isinstance(release, ElasticNetRelease) else 2
    return project_rows(X, float(release.x_bound), norm)


def _split_theta(theta: np.ndarray, fit_intercept: bool) -> tuple[np.ndarray, float]:
    """(coefficients, intercept) of a solution vector whose last entry is the intercept, if fitted."""
    if fit_intercept:
        return theta[:-1].copy(), float(theta[-1])
    return theta.copy(), 0.0


_DATA_ECHO = "\narray="  # scikit-learn quotes the offending array after this marker


def _checked_input(estimator, X, y="no_validation", *, reset: bool):
    """``validate_data`` (float64, finite), with messages that never quote a record.

    NumPy and scikit-learn print the offending value or array in some of their messages
    (strings that do not convert, complex entries, 1-D input); those are replaced by messages
    that name the argument only.
    """
    if getattr(X, "dtype", np.dtype(float)).kind in "USV":
        raise ValueError("X must be numeric (an array of real numbers)")
    try:
        return validate_data(estimator, X, y, reset=reset, dtype=np.float64)
    except TypeError as error:
        if "sparse" in str(error).lower():
            raise
        # scikit-learn's checks expect a TypeError saying that an argument must be a string or a number
        raise TypeError("X must be numeric: an argument must be a string or a real number") from None
    except ValueError as error:
        message = str(error)
        if message.startswith(("could not convert", "setting an array element")):
            raise ValueError("X must be numeric (an array of real numbers)") from None
        if message.startswith("Found input variables with inconsistent numbers of samples"):
            raise ValueError(f"X and y must have the same number of records: {message}") from None
        if message.startswith("Found array with"):
            raise ValueError(f"X: {message}") from None
        if message.startswith("Complex data not supported"):
            raise ValueError("Complex data not supported: X and y must be real") from None
        if _DATA_ECHO in message:
            head = message.split(_DATA_ECHO)[0].rstrip(":")
            raise ValueError(
                f"{head}. Reshape your data with X.reshape(-1, 1) if it has a single feature or "
                "X.reshape(1, -1) if it holds a single record"
            ) from None
        raise


def _binary_labels(y: np.ndarray, classes) -> tuple[np.ndarray, np.ndarray]:
    """(classes_, labels as ±1 floats) of binary targets; ValueError before any charge otherwise.

    ``classes`` (public) fixes the label set; without it the labels of ``y`` must be exactly
    two.  Messages name no label value.
    """
    check_classification_targets(y)
    kind = type_of_target(y, input_name="y")
    if kind != "binary":
        raise ValueError(f"Only binary classification is supported. The type of the target is {kind}.")
    if classes is None:
        classes = np.unique(y)
        if classes.size != 2:
            raise ValueError(
                "y holds one class only: the classifier needs both labels in y, or the public "
                "label set passed as classes"
            )
    else:
        given = np.asarray(classes)
        if given.ndim != 1 or given.dtype.kind not in "biuUS":
            raise ValueError("classes must be a 1-D sequence of two distinct labels (integers or strings)")
        classes = np.unique(given)
        if classes.size != 2:
            raise ValueError(f"classes must hold exactly two distinct labels, got {classes.size}")
        if not np.isin(y, classes).all():
            raise ValueError("y holds a label that is not in classes")
    return classes, np.where(y == classes[1], 1.0, -1.0)


def _encoding_classes(y) -> np.ndarray:
    """The label set of targets coded in {0, 1} or {−1, 1}: [−1, 1] if −1 occurs, else [0, 1]."""
    return np.array([-1, 1]) if np.any(np.asarray(y) < 0) else np.array([0, 1])


def _fitted_model(X, release: ElasticNetRelease, classes, **params) -> DPElasticNetLogisticRegression:
    """A :class:`DPElasticNetLogisticRegression` holding ``release`` as if fitted on ``X``.

    For mechanisms that release an elastic-net model by other means (private penalty
    selection): ``X`` sets ``n_features_in_`` and ``feature_names_in_`` only.
    """
    model = DPElasticNetLogisticRegression(**params)
    validate_data(model, X, skip_check_array=True, reset=True)
    model._hold(release, np.asarray(classes))
    return model
