"""corral's errors as exceptions: one class per wire error code
(PROTOCOL.md, "Errors"), so a framework acts on the kind, not the text."""


class Error(Exception):
    """A refusal or failure of corrald. code: the wire's code; message:
    the daemon's sentence for people (for a refusal, its reason)."""

    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


class BadRequest(Error):
    """The request was malformed or a field refused (invalid_argument,
    protocol)."""


class NotFound(Error):
    """No such sandbox, run or file (not_found)."""


class Exists(BadRequest):
    """A name or run id is taken, by another request (already_exists)."""


class Refused(Error):
    """Not the caller's to do, or refused by the sandbox's policy or its
    write guard (permission_denied); message says why."""

    @property
    def reason(self):
        return self.message


class LimitReached(Error):
    """A cap was reached: sandboxes, runs, shares, sizes (limit)."""


class Unavailable(Error):
    """corrald cannot be reached, or lacks what the request needs
    (unavailable); message says which and why."""


_BY_CODE = {
    "invalid_argument": BadRequest, "protocol": BadRequest, "not_found": NotFound,
    "already_exists": Exists, "permission_denied": Refused, "limit": LimitReached,
    "unavailable": Unavailable,
}


def from_wire(err):
    """The exception for the wire's Error message ERR (a dict)."""
    code = err.get("code") or "internal"
    return _BY_CODE.get(code, Error)(code, err.get("message") or "")
