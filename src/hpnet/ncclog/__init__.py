"""NCCL debug logs, read top to bottom.

One package, one pipeline; each module feeds the next:

1. :mod:`~hpnet.ncclog.read` — the edge: files, directories, pipes, gzip, workers
   (:mod:`~hpnet.ncclog.inputs`: which paths; :mod:`~hpnet.ncclog.streams`: FIFOs and
   standard input);
2. :mod:`~hpnet.ncclog.scan` — a block of text -> counted distinct lines, in C where it can;
3. :mod:`~hpnet.ncclog.lines` — one line -> an event: who wrote it (the prefix behind any
   launcher's tags: :mod:`~hpnet.ncclog.prefix`) and what it says (the message, read by
   :mod:`~hpnet.ncclog.messages` with the format strings of the releases that print it:
   :mod:`~hpnet.ncclog.versions`);
4. :mod:`~hpnet.ncclog.facts` — events -> what each process said
   (:mod:`~hpnet.ncclog.process`, :mod:`~hpnet.ncclog.model`);
5. :mod:`~hpnet.ncclog.placement` — where each rank ran: machines, NCCL hosts, communicators;
6. :mod:`~hpnet.ncclog.findings` — failure signatures (:mod:`~hpnet.ncclog.signatures`),
   mixed releases (:mod:`~hpnet.ncclog.releases`) and conclusions no single line states
   (:mod:`~hpnet.ncclog.conclusions`: :mod:`~hpnet.ncclog.network`,
   :mod:`~hpnet.ncclog.gdr`, :mod:`~hpnet.ncclog.environment`);
7. :mod:`~hpnet.ncclog.report` — the per-host table (:mod:`~hpnet.ncclog.transports`),
   the verdict (:mod:`~hpnet.ncclog.verdict`), ``--expect``
   (:mod:`~hpnet.ncclog.expectation`).
"""
