"""corral's Python client: drives corrald's sandboxes over its control
socket (PROTOCOL.md), with the standard library only.

    import corral
    c = corral.connect()
    sb = c.create(roots=[("/home/sam/app", True)], profile="strict")
    r = sb.run("make test")
    r["exit_code"], r["output"]
"""

from ._client import DEFAULT_SOCKET, Client, Sandbox, connect, describe
from ._errors import (BadRequest, Error, Exists, LimitReached, NotFound, Refused,
                      Unavailable)

__all__ = ["connect", "Client", "Sandbox", "describe", "DEFAULT_SOCKET", "Error",
           "BadRequest", "Exists", "NotFound", "Refused", "LimitReached", "Unavailable"]
