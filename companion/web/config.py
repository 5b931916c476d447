"""Configuration of the dashboard (what ``doomcompanion serve`` passes to ``create_app``)."""

from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass, field
from pathlib import Path


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class WebConfig:
    """Everything the app factory needs.

    Attributes
    ----------
    db_path : path of the SQLite games file (``":memory:"`` for a throw-away store).
    source : the camera source spec (``None``: the bundled demo; ``"none"``: no camera).
    host : the address served; a non-loopback host turns the token on.
    token : the secret every state-changing request must carry when set (``None``: made up
        when the host is not loopback, else not required).
    max_body_bytes : limit of a request body (game imports included).
    live : start the camera loop (tests of the API turn it off).
    """

    db_path: str | Path = ":memory:"
    source: str | None = "none"
    host: str = "127.0.0.1"
    port: int = 8321
    token: str | None = None
    max_body_bytes: int = 2 * 1024 * 1024
    live: bool = True
    sse_keepalive_s: float = 15.0
    extra: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.token is None and not is_loopback(self.host):
            self.token = secrets.token_urlsafe(16)
