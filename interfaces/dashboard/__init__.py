"""The web dashboard: search, browse, edit, link and forget memories, their graph and the status."""

from interfaces.dashboard.app import create_dashboard
from interfaces.dashboard.state import DashboardSource, HealthCheck, HealthChecks

__all__ = ["DashboardSource", "HealthCheck", "HealthChecks", "create_dashboard"]
