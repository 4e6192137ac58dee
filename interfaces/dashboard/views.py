"""Rendering: one Jinja2 environment (autoescape always on) and the headers every answer carries."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.requests import Request
from starlette.responses import HTMLResponse

__all__ = ["SECURITY_HEADERS", "STATIC_DIR", "Renderer", "short_date"]

HERE = Path(__file__).parent
STATIC_DIR = HERE / "static"

# No inline script or style anywhere: memory text is untrusted, and this CSP is the second wall
# behind escaping. 'self' scripts are the vendored libraries and dashboard.js only.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
}


def short_date(value: str | None) -> str:
    """An ISO 8601 time as ``YYYY-MM-DD HH:MM`` (UTC as stored); empty for None."""
    if not value:
        return ""
    try:
        return datetime.fromisoformat(value).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return value


def percent(value: float) -> str:
    return f"{value:.0%}"


class Renderer:
    """Renders the templates of ``templates/`` into HTML responses."""

    def __init__(self) -> None:
        self._env = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self._env.filters["short_date"] = short_date
        self._env.filters["percent"] = percent

    def page(
        self, request: Request, template: str, context: Mapping[str, Any], status_code: int = 200
    ) -> HTMLResponse:
        """``template`` with ``context`` plus what every page needs (session, CSRF token, path)."""
        state = request.scope.get("state", {})
        values = {
            "csrf": state.get("csrf", ""),
            "logged_in": state.get("logged_in", False),
            "login_required": state.get("login_required", False),
            "path": request.url.path,
            **context,
        }
        html = self._env.get_template(template).render(values)
        return HTMLResponse(html, status_code=status_code, headers={"cache-control": "no-store"})
