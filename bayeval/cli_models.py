"""Saved classifiers for ``bayeval mvu``: skops files, checked before they are loaded.

A skops file (``skops.io.dump``) holds the classifier's parts, not code: loading it builds only
the types it lists, and :func:`load_classifier` refuses a file that lists a type skops does not
trust by default, unless the user names it (``--trust TYPE``) or trusts the whole file
(``--trust-all``). A pickle or joblib file runs whatever code it holds when it is loaded, so
it is read only with ``--unsafe-pickle``, and with a warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bayeval.cli_files import InputError

__all__ = ["PICKLE_SUFFIXES", "load_classifier"]

#: the suffixes of pickle and joblib files
PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib")


def load_classifier(path: str, *, trust: Sequence[str] = (), trust_all: bool = False,
                    unsafe_pickle: bool = False) -> Any:
    """The classifier saved in ``path`` (``--classifier``), with its ``predict_proba``.

    Parameters
    ----------
    path : str
        A skops file, or with ``unsafe_pickle`` a pickle or joblib file.
    trust : sequence of str
        Types the file may hold beyond those skops trusts (``--trust``).
    trust_all : bool
        Trust every type the file holds (``--trust-all``): for a file you made yourself.
    unsafe_pickle : bool
        Read ``path`` with joblib (pickle), which runs any code the file holds.

    Returns
    -------
    object
        The classifier.

    Raises
    ------
    InputError
        No such file; a pickle file without ``unsafe_pickle``; skops not installed; a file
        that cannot be read; types not trusted (listed, with the options that trust them); an
        object without ``predict_proba``.

    Examples
    --------
    >>> import tempfile
    >>> import skops.io
    >>> from sklearn.linear_model import LogisticRegression
    >>> path = f"{tempfile.mkdtemp()}/model.skops"
    >>> skops.io.dump(LogisticRegression().fit([[0.0], [1.0]], [0, 1]), path)
    >>> load_classifier(path).predict_proba([[1.0]]).shape
    (1, 2)
    >>> load_classifier(path.replace(".skops", ".pkl"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bayeval.cli_files.InputError: --classifier: no such file: ....pkl
    """
    file = Path(path)
    if not file.is_file():
        raise InputError(f"--classifier: no such file: {path}")
    if unsafe_pickle:
        model = _unpickle(file)
    elif file.name.lower().endswith(PICKLE_SUFFIXES):
        raise InputError(f"--classifier: {path} is a pickle file, which runs any code it holds "
                         "when it is loaded; save the model with skops.io.dump (.skops), or "
                         "pass --unsafe-pickle if you made the file or trust its source")
    else:
        model = _skops(file, trust, trust_all)
    if not callable(getattr(model, "predict_proba", None)):
        raise InputError(f"--classifier: {path} holds a {type(model).__name__}, which has no "
                         "predict_proba; mvu needs a classifier's probabilities")
    return model


def _unpickle(file: Path) -> Any:
    import joblib

    warnings.warn(f"--unsafe-pickle: loading {file} runs any code it holds; use it only on a "
                  "file you made or trust", UserWarning, stacklevel=3)
    try:
        return joblib.load(file)
    except Exception as err:  # a pickle fails in as many ways as the code it holds
        raise InputError(f"--classifier: cannot read {file} as a pickle or joblib file: "
                         f"{type(err).__name__}: {err}") from None


def _skops(file: Path, trust: Sequence[str], trust_all: bool) -> Any:
    try:
        import skops.io as sio
    except ImportError:
        raise InputError("--classifier: reading a skops file needs skops: pip install "
                         "'bayeval[mvu-cli]'") from None
    try:
        listed = sio.get_untrusted_types(file=file)
    except Exception as err:  # not a zip, no schema: skops' errors are of many types
        raise InputError(f"--classifier: cannot read {file} as a skops file ({type(err).__name__}"
                         f": {err}); save the model with skops.io.dump") from None
    refused = [t for t in listed if t not in trust]
    if refused and not trust_all:
        raise InputError(f"--classifier: {file} holds types that skops does not trust by "
                         f"default: {', '.join(refused)}; if you trust them, pass --trust TYPE "
                         "for each (or --trust-all for a file you made)")
    return sio.load(file, trusted=listed)
