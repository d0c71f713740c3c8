"""The demo store's sessions: the summaries pi captured, two years ago to last month,
in the two demo projects (their text, and how many days before ``now`` each was)."""

from __future__ import annotations

from dataclasses import dataclass

SHOP = "/home/demo/projects/tidewater"
LAB = "/home/demo/projects/homelab"


@dataclass(frozen=True, slots=True)
class _Summary:
    days_ago: float
    scope: str
    text: str


def _summary(goal: str, **sections: list[str]) -> str:
    titles = {
        "prefs": "Constraints & Preferences",
        "decisions": "Key Decisions",
        "progress": "Progress",
        "context": "Critical Context",
        "blocked": "Blocked",
    }
    parts = [f"## Goal\n{goal}\n"]
    for key, lines in sections.items():
        parts.append(f"## {titles[key]}\n" + "".join(f"- {line}\n" for line in lines))
    return "\n".join(parts)


# Old sessions: these records have been left alone long enough to go dormant or age.
_HISTORY = [
    _Summary(
        790,
        SHOP,
        _summary(
            "Start the tidewater forecasting site.",
            prefs=[
                "Use uv for Python environments; never pip install into the system interpreter.",
                "Format Python with ruff format and keep lines at 100 columns.",
            ],
            decisions=["Django serves the site; Celery runs the tide-model jobs."],
            context=["The tide model lives in tidewater/model and is pure NumPy."],
        ),
    ),
    _Summary(
        420,
        LAB,
        _summary(
            "Set up the homelab.",
            prefs=["Prefer NixOS modules over ad-hoc shell provisioning."],
            decisions=["Caddy terminates TLS for every service on the LAN."],
            context=["The Proxmox host is pve1 at 192.168.10.2."],
        ),
    ),
    _Summary(
        300,
        SHOP,
        _summary(
            "Move background jobs.",
            decisions=["Celery uses Redis as its broker; results go to Postgres."],
            context=["Station data is fetched nightly from the NOAA CO-OPS API."],
        ),
    ),
    _Summary(
        240,
        LAB,
        _summary(
            "Backups.",
            decisions=["Restic backs up /srv to the NAS every night at 02:00."],
            context=["The NAS exports /volume1/backup over NFS to the 10.0.0.0/24 subnet."],
        ),
    ),
    _Summary(
        120,
        SHOP,
        _summary(
            "Performance work.",
            prefs=["Write tests with pytest and keep fixtures in conftest.py files."],
            context=[
                "The dev database listens on port 5433 in docker compose.",
                "Forecast pages are cached in Redis for 15 minutes.",
            ],
        ),
    ),
    _Summary(
        100,
        LAB,
        _summary(
            "Monitoring.",
            context=["Grafana runs at grafana.lab.internal behind Caddy."],
            decisions=["Prometheus scrapes every node_exporter every 30 seconds."],
        ),
    ),
    _Summary(
        12,
        SHOP,
        _summary(
            "Sprint on station pages.",
            progress=["[x] Station detail page renders the 7-day forecast"],
            blocked=["Waiting for the NOAA API key increase before backfilling 2019"],
        ),
    ),
]

# The last month, most recent last.
_MONTH = [
    _Summary(
        27,
        SHOP,
        _summary(
            "Speed up the forecast API.",
            prefs=["Type-check with mypy --strict before every commit."],
            decisions=["Forecast API responses are gzip-compressed by Django middleware."],
            context=[
                "The dev database listens on port 5433 in docker compose.",
                "Celery workers run with concurrency 4 in production.",
            ],
        ),
    ),
    _Summary(
        21,
        LAB,
        _summary(
            "Upgrade the cluster.",
            decisions=["Caddy terminates TLS for every service on the LAN."],
            context=[
                "The Proxmox host is pve1 at 192.168.10.2.",
                "Grafana runs at grafana.lab.internal behind Caddy.",
            ],
            progress=["[x] Upgraded Proxmox to 8.2 on pve1"],
        ),
    ),
    _Summary(
        14,
        SHOP,
        _summary(
            "Tide chart rewrite.",
            decisions=["Tide charts are drawn client-side with uPlot."],
            context=["Forecast pages are cached in Redis for 15 minutes."],
            progress=["[ ] Port the harmonic constants loader to the new schema"],
        ),
    ),
    _Summary(
        6,
        LAB,
        _summary(
            "Alerting.",
            decisions=["Alerts go to a ntfy topic, not e-mail."],
            progress=["[x] Alertmanager routes disk alerts to ntfy"],
        ),
    ),
    _Summary(
        2.5,
        SHOP,
        _summary(
            "Release prep.",
            progress=[
                "[x] Backfill of 2019 station data finished",
                "[ ] Cut release 2.4 after the chart review",
            ],
            context=["Release builds are tagged vX.Y.Z and deployed by GitHub Actions."],
        ),
    ),
    _Summary(
        0.6,
        SHOP,
        _summary(
            "Fix the flaky forecast test.",
            progress=["[ ] Make test_forecast_rounding independent of the local timezone"],
            context=["CI runs the test suite on Python 3.12 and 3.13."],
        ),
    ),
]
