"""RDMA devices: the model, the sysfs reader and parsers of the verbs tools' output."""

from hpnet.rdma.model import Gid, GidKind, PortState, RdmaDevice, RdmaPort, UverbsNode

__all__ = ["Gid", "GidKind", "PortState", "RdmaDevice", "RdmaPort", "UverbsNode"]
