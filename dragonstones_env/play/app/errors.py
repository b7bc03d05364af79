"""The app's edge: HTTP statuses of refusals, and the app's own (:class:`AppError`).

The table (``play/table.py``) and the game registry raise plain exceptions; the app answers each
class with one status (:func:`status_of`), its message as ``{"error": message}``.
"""

from __future__ import annotations

from dragonstones_env.play.refusals import Conflict, Forbidden, Refused, TooLarge, Unplayable
from dragonstones_env.registry import TableSizeError, UnknownGameError


class AppError(Exception):
    """A refusal of the server itself (a token, a table id, a limit): ``status`` (4xx, 503) and a
    message naming what was wrong."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


# The most specific class first: the refusals subclass Refused.
STATUS: tuple[tuple[type[Exception], int], ...] = (
    (Forbidden, 403), (Conflict, 409), (TooLarge, 413), (Unplayable, 422), (Refused, 400),
    (UnknownGameError, 400), (TableSizeError, 400),
)
REFUSALS = (AppError, *(kind for kind, _ in STATUS))  # what the app answers with a status, not a 500


def status_of(err: BaseException) -> int:
    """The HTTP status of a refusal (one of :data:`REFUSALS`)."""
    if isinstance(err, AppError):
        return err.status
    return next(status for kind, status in STATUS if isinstance(err, kind))


def message_of(err: BaseException) -> str:
    return err.message if isinstance(err, AppError) else str(err)

