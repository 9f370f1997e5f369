"""The role of this process in the session, one plugin object each, picked once at configure; and what each role offers a feature.

* ``serial.Serial``: a session without xdist. It executes the runs and aggregates them.
* ``controller.Controller``: the xdist controller. It aggregates what the
  workers send, decides, and publishes decisions through the channel; it
  executes nothing.
* ``worker.Worker``: an xdist worker. It executes runs and ships their
  records on the reports; it aggregates nothing and prints no table.

As pytest-cov's central/controller/worker objects, each registers the hooks
of its role only, and wires its own parts and each feature's
(``wiring.Feature``: a feature registers for the roles it has parts in). No
module tests a role string. The core's optional parts are wired as features
are, so that the composition root imports each only when its option is on:
``reports.Reports`` (``--prob-json``, ``--prob-html``), ``prices.Prices``
(``--prob-prices``) and ``retries.Retries`` (``--prob-retry``); the merge's
wiring is ``merging.MergeWiring``.
"""
