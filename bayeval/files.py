r"""Evaluation files: netCDF (HDF5) bytes followed by their SHA-256, read back safely.

:func:`write` stores an evaluation's netCDF bytes and, after them, a trailer holding their
SHA-256 digest; :func:`read` checks the digest before any HDF5 parser sees the bytes, so a file
damaged in storage or transfer (a flipped byte, a cut) is refused at once instead of being
parsed, where HDF5's readers can fail in any way, hang included. HDF5 ignores bytes after the
end address that its superblock records, so the file stays a netCDF file for other programs.
A file without the trailer (written by another program, or by bayeval before the trailer
existed) is parsed in a separate process under a time limit (:data:`READ_TIMEOUT`), which
writes it again to a temporary copy that is read instead. Nothing in a file
is executed: netCDF holds data only.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import xarray as xr

__all__ = ["MAX_BYTES", "READ_TIMEOUT", "TRAILER", "read", "write"]

#: the trailer's tag; the 64 hex digits of the SHA-256 of the bytes before it and a newline follow
TRAILER = b"\nbayeval-sha256:"
_SIZE = len(TRAILER) + 65
_HDF5 = b"\x89HDF\r\n\x1a\n"
#: seconds a worker may take to parse a file without the trailer
READ_TIMEOUT = 60.0
#: the largest file read (2 GiB): its bytes are held in memory while they are checked
MAX_BYTES = 2**31

_WORKER = """
import sys, xarray as xr
with xr.open_datatree(sys.argv[1], engine="h5netcdf") as tree:
    tree.load().to_netcdf(sys.argv[2], engine="h5netcdf")
"""


def write(tree: xr.DataTree, path) -> str:
    """Write ``tree`` as netCDF (h5netcdf) to ``path``, followed by the trailer.

    Parameters
    ----------
    tree : xarray.DataTree
    path : str or path-like

    Returns
    -------
    str
        ``path``.

    Examples
    --------
    >>> import tempfile
    >>> tree = xr.DataTree(xr.Dataset({"x": ("i", [1.0, 2.0])}))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     back = read(write(tree, f"{tmp}/x.nc"))
    >>> back.identical(tree)
    True
    """
    tree.to_netcdf(path, engine="h5netcdf")  # to a file: in memory, a dask client's lock fails
    with open(path, "rb+") as file:
        digest = hashlib.sha256(file.read()).hexdigest().encode()
        file.write(TRAILER + digest + b"\n")
    return str(path)


def read(path) -> xr.DataTree:
    """The tree of a netCDF file, checked before it is parsed (see the module's description).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    xarray.DataTree
        Loaded into memory; the file is closed.

    Raises
    ------
    ValueError
        Naming the file and the reason: missing, a folder, unreadable, empty, larger than
        :data:`MAX_BYTES`, not HDF5/netCDF, damaged (its digest differs), or without the trailer
        and not parsed within :data:`READ_TIMEOUT` seconds.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write(xr.DataTree(xr.Dataset({"x": 1.0})), f"{tmp}/x.nc")
    ...     data = bytearray(Path(path).read_bytes())
    ...     data[300] ^= 1  # one flipped bit
    ...     _ = Path(path).write_bytes(bytes(data))
    ...     read(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: cannot load .../x.nc: the file is damaged (its SHA-256 differs from the one ...
    """
    where = f"cannot load {path}"
    file = Path(path)
    try:
        size = file.stat().st_size
        if file.is_dir():
            raise ValueError(f"{where}: it is a folder, not a file.")
        if size > MAX_BYTES:
            raise ValueError(f"{where}: it has {size:,} bytes, more than the {MAX_BYTES:,} read.")
        data = file.read_bytes()
    except OSError as err:
        raise ValueError(f"{where}: {err.strerror or err}.") from None
    if not data:
        raise ValueError(f"{where}: the file is empty.")
    if not data.startswith(_HDF5):
        raise ValueError(f"{where}: not a netCDF file written by Evaluation.to_netcdf (no HDF5 "
                         "signature at its start).")
    tag = data.rfind(TRAILER, max(0, len(data) - _SIZE))
    if tag < 0 or len(data) - tag != _SIZE:
        with tempfile.TemporaryDirectory() as tmp:
            return _parse(_in_worker(file, Path(tmp) / "copy.nc", where), where)
    if hashlib.sha256(data[:tag]).hexdigest().encode() + b"\n" != data[tag + len(TRAILER):]:
        raise ValueError(f"{where}: the file is damaged (its SHA-256 differs from the one "
                         "stored when it was written); it was changed or cut after saving.")
    return _parse(file, where)


def _parse(file: Path, where: str) -> xr.DataTree:
    try:
        with xr.open_datatree(file, engine="h5netcdf") as tree:
            return tree.load()
    except Exception as err:  # any failure of the HDF5 parser: one message
        raise ValueError(f"{where}: not a readable netCDF file ({type(err).__name__}: "
                         f"{err}).") from None


def _in_worker(file: Path, copy: Path, where: str) -> Path:
    """A file without the trailer parsed by another Python process within
    :data:`READ_TIMEOUT` seconds and written again to ``copy`` by the netCDF writer."""
    try:
        run = subprocess.run([sys.executable, "-c", _WORKER, os.fspath(file), os.fspath(copy)],
                             capture_output=True, timeout=READ_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise ValueError(f"{where}: the file has no bayeval checksum and could not be parsed in "
                         f"{READ_TIMEOUT:g} s (damaged?).") from None
    if run.returncode != 0:
        last = (run.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
        raise ValueError(f"{where}: not a readable netCDF file (it has no bayeval checksum; "
                         f"the parser said: {last}).")
    return copy
