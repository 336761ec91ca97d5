"""Facts about this node other than RDMA devices: netdevs, GPUs, PCIe topology,
versions, limits and container context, each read through an injectable edge."""
