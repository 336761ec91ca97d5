"""What every command run as the ranks of one job shares (``hpnet check --all``,
``hpnet isolate``; ``hpnet hang`` reads what they leave), one copy each:

* :mod:`~hpnet.cluster.facts` — what a rank reports: its place (node, host, local
  rank), its node's inventory, the NCCL variables it received, the NCCL its node loads;
  the cluster's GPUs counted once;
* :mod:`~hpnet.cluster.folder` — the job's folder for its ranks' files, rank 0's
  result in it, and making a directory hpnet was told to write into;
* :mod:`~hpnet.cluster.spawn` — the rank's worker process: its environment, its
  deadline, its error, and its end with its rank;
* :mod:`~hpnet.cluster.gather` — inside the worker: every rank's report on every rank,
  the ranks by node, the rank's NCCL log;
* :mod:`~hpnet.cluster.report` — the report folder (report.json, report.html) and the
  pages' one look.

What the commands conclude stays theirs: check's cluster view in
:mod:`hpnet.check.cluster`, isolate's rounds in :mod:`hpnet.isolate`.
"""
