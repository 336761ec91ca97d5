"""``hpnet verify --run``: record a short NCCL job's debug log and analyse it."""
