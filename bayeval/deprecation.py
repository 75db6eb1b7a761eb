"""Renamed arguments and names, kept for one release with a ``FutureWarning``.

Two helpers, one per kind of rename:

* :func:`renamed_arguments` decorates a function whose keyword arguments were renamed: the old
  keyword still works, warns, and is passed on under its new name.
* :func:`renamed_names` makes a module ``__getattr__`` that serves old attribute names with a
  warning; :func:`renamed_builders` does it for the old model builders ``model_<variant>``,
  now ``model(..., variant=...)``.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["renamed_arguments", "renamed_builders", "renamed_names"]

REMOVAL = "the next release"


def _warn(message: str, stacklevel: int) -> None:
    warnings.warn(f"{message}; the old name will be removed in {REMOVAL}.", FutureWarning,
                  stacklevel=stacklevel + 1)


def renamed_arguments(**renames: str) -> Callable[[Callable], Callable]:
    """Accept the old keyword ``old`` of ``renames = {old: new}`` with a ``FutureWarning``.

    Raises
    ------
    TypeError
        If a call gives both the old and the new name.

    Examples
    --------
    >>> import warnings
    >>> @renamed_arguments(n_draws="draws")
    ... def f(*, draws=10):
    ...     return draws
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     f(n_draws=3), caught[0].category.__name__
    (3, 'FutureWarning')
    """

    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(f"{func.__name__}() got both {old}= and its new name {new}=; "
                                    f"give {new}= only.")
                _warn(f"{func.__name__}({old}=) is now {func.__name__}({new}=)", stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return wrapper

    return decorate


def renamed_names(module: str, names: Mapping[str, tuple[str, Callable[[], Any]]]
                  ) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving ``names = {old: (new, get)}`` with a ``FutureWarning``.

    ``new`` says what replaces the old name (e.g. ``"model(..., variant='v0')"``) and ``get()``
    returns the object to serve.

    Examples
    --------
    >>> import warnings
    >>> getattr_ = renamed_names("pkg", {"old": ("new", lambda: 42)})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     getattr_("old"), str(caught[0].message).split(";")[0]
    (42, 'pkg.old is now pkg.new')
    """

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new, get = names[name]
        _warn(f"{module}.{name} is now {module}.{new}", stacklevel=2)
        return get()

    return __getattr__


def renamed_builders(module: str, model: Callable, variants: Iterable[str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving the old builders ``model_<v>`` as ``model(...,
    variant=v)``, with a ``FutureWarning`` (:func:`renamed_names`).

    Examples
    --------
    >>> import warnings
    >>> getattr_ = renamed_builders("pkg", lambda *a, variant: (a, variant), ("a", "b"))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     getattr_("model_b")(1)
    ((1,), 'b')
    """
    return renamed_names(module, {
        f"model_{v}": (f"model(..., variant={v!r})",
                       functools.partial(functools.partial, model, variant=v))
        for v in variants})
