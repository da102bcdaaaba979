"""Exceptions raised by the switchyard client.

Every failed call raises a ``SwitchyardError`` subclass chosen by the gRPC
status code, so callers can catch what they can act on. The subclasses also
derive from the matching built-in exception (``ValueError``, ``LookupError``,
``ConnectionError``, ``TimeoutError``) for code that already handles those.
"""

from __future__ import annotations

from typing import Optional

import grpc


class SwitchyardError(Exception):
    """A switchyard call failed. ``op`` names the call, ``code`` is the gRPC
    status code (None for errors found before calling), ``details`` the
    server's message."""

    def __init__(self, op: str, details: str, code: Optional[grpc.StatusCode] = None):
        self.op = op
        self.code = code
        self.details = details
        where = f"{op}: {code.name}: " if code is not None else f"{op}: "
        super().__init__(f"switchyard: {where}{details}")


class InvalidArgumentError(SwitchyardError, ValueError):
    """The request is malformed; the message names the field."""


class NotFoundError(SwitchyardError, LookupError):
    """An unknown replica or model."""


class UnavailableError(SwitchyardError, ConnectionError):
    """The server cannot be reached, or no replica of the model is ready."""


class ConflictError(SwitchyardError):
    """The request conflicts with the server's state (for example moving a
    registered replica to another model)."""


class DeadlineExceededError(SwitchyardError, TimeoutError):
    """The call did not finish within its timeout."""


class ClosedError(SwitchyardError):
    """The client or reporter was closed."""


_BY_CODE = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.FAILED_PRECONDITION: ConflictError,
    grpc.StatusCode.ALREADY_EXISTS: ConflictError,
    grpc.StatusCode.ABORTED: ConflictError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
}


def from_rpc_error(op: str, err: grpc.RpcError) -> SwitchyardError:
    """Map a gRPC error (sync or asyncio) to the matching SwitchyardError."""
    code = err.code() if callable(getattr(err, "code", None)) else grpc.StatusCode.UNKNOWN
    details = err.details() if callable(getattr(err, "details", None)) else str(err)
    return _BY_CODE.get(code, SwitchyardError)(op, details or "", code)
