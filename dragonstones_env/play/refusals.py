"""What a table refuses, as plain exceptions: the terminal prints them, the web app maps each class to
an HTTP status at its edge (``play/app/errors.py``). Each message names what was wrong and what is allowed.

All are ValueErrors (bad input); a refused request changes nothing.
"""

from __future__ import annotations


class Refused(ValueError):
    """Input a table cannot take: a malformed field, an unknown policy or deck (the app: 400)."""


class Forbidden(Refused):
    """The asker may not do this: act for another seat, or for a bot's (403)."""


class Conflict(Refused):
    """Not now: the game is over, or it is another seat's decision (409)."""


class TooLarge(Refused):
    """A record with more events than a replay takes (413)."""


class Unplayable(Refused):
    """A record (or a stored table) the engine does not reproduce, or an action that is not legal now (422)."""


__all__ = ["Conflict", "Forbidden", "Refused", "TooLarge", "Unplayable"]
