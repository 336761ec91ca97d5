"""The checks, one module per area; :data:`hpnet.doctor.registry.CHECKS` lists them."""
