"""``hpnet doctor``: pre-flight checks, each a pure judgement over gathered facts."""
