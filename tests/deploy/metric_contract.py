"""What deploy/ assumes about the plugin's metrics beyond their names.

The names, labels and label values themselves are NOT written down here: the
tests read them from what a real Prometheus 3 stored from a real export of
the plugin (real_export.py through the real Collector, stored.py), and check
the rules, the dashboards, the promtool unit tests and the contract table of
deploy/README.md against that. What stays here is policy that an export
cannot show.
"""

from __future__ import annotations

# Resource attributes whose value changes every session: never promote them
# to labels (they would split every series each night). They stay on
# target_info.
PER_SESSION_RESOURCE_ATTRIBUTES = {
    "vcs.ref.head.revision",
    "cicd.pipeline.run.id",
    "cicd.pipeline.run.url.full",
}

# Labels with a closed set of values set by the plugin (outcomes, row
# statuses, token types): a value compared with `=` in PromQL, or fed to
# promtool, must be one the export carries.
ENUMERATED_LABELS = {"probability_outcome", "probability_status", "gen_ai_token_type"}

# Labels Prometheus may add that the export does not show: job comes from
# service.name (it does), instance from service.instance.id (the plugin sends
# none, but a deployment may set one through OTEL_RESOURCE_ATTRIBUTES).
SERVER_SIDE_LABELS = {"job", "instance"}
