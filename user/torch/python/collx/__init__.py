# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""collx: collective communication run by the kernel over RDMA.

``import collx.torch`` registers collx as a torch.distributed backend:
``torch.distributed.init_process_group("collx", ...)``.
"""
