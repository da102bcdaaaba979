"""Python client for the switchyard router.

``SwitchyardClient`` (blocking) and ``AsyncSwitchyardClient`` (asyncio) ask the
router which replica gets a request (``pick``), report the request's lifecycle
in batches (``lifecycle()``), and manage replicas. ``switchyard.ray`` adapts the
client to Ray Serve's ``RequestRouter`` interface; Ray itself is imported only
when that router class is used.

The generated protobuf/gRPC stubs live in the package ``switchyard.v1``. An
installed wheel carries them inside this package. In a source checkout they
stay where the code generator writes them (``gen/python/switchyard/v1`` at
the repository root), and this package extends its ``__path__`` to that
directory so that ``import switchyard.v1`` finds them; the environment
variable ``SWITCHYARD_GEN_PYTHON`` can name another ``gen/python`` directory.
"""

import os as _os
from pathlib import Path as _Path


def _stub_dirs():
    """Directories holding a ``v1`` stub package to add to ``__path__``."""
    here = _Path(__file__).resolve().parent
    if (here / "v1" / "router_pb2.py").is_file():
        return []  # installed: the stubs were packaged inside
    roots = []
    if _os.environ.get("SWITCHYARD_GEN_PYTHON"):
        roots.append(_Path(_os.environ["SWITCHYARD_GEN_PYTHON"]))
    roots.append(here.parents[2] / "gen" / "python")  # clients/python/switchyard -> repo root
    return [str(r / "switchyard") for r in roots if (r / "switchyard" / "v1" / "router_pb2.py").is_file()]


_dirs = _stub_dirs()
if not _dirs and not (_Path(__file__).resolve().parent / "v1").is_dir():
    raise ImportError("switchyard: the generated stubs (switchyard.v1) were not found: install the package "
                      "(pip install clients/python) or set SWITCHYARD_GEN_PYTHON to the repository's gen/python")
__path__.extend(_dirs)  # noqa: F821 - __path__ is set for packages

from switchyard.errors import (  # noqa: E402
    ClosedError,
    ConflictError,
    DeadlineExceededError,
    InvalidArgumentError,
    NotFoundError,
    SwitchyardError,
    UnavailableError,
)
from switchyard.events import admitted, done, first_token, progress  # noqa: E402
from switchyard.lifecycle import LifecycleReporter, LifecycleStats  # noqa: E402
from switchyard.client import SwitchyardClient  # noqa: E402
from switchyard.aio import AsyncLifecycleReporter, AsyncSwitchyardClient  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "AsyncLifecycleReporter",
    "AsyncSwitchyardClient",
    "ClosedError",
    "ConflictError",
    "DeadlineExceededError",
    "InvalidArgumentError",
    "LifecycleReporter",
    "LifecycleStats",
    "NotFoundError",
    "SwitchyardClient",
    "SwitchyardError",
    "UnavailableError",
    "admitted",
    "done",
    "first_token",
    "progress",
]
