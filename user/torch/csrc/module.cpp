// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// collx._c10d: the Python face of ProcessGroupCollx.  collx/torch.py
// registers it with torch.distributed as the "collx" backend.
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include "process_group.hpp"

namespace py = pybind11;
using collx_torch::ProcessGroupCollx;

namespace {

c10::intrusive_ptr<ProcessGroupCollx> create(const c10::intrusive_ptr<c10d::Store>& store,
                                             int rank, int size,
                                             std::chrono::milliseconds timeout) {
  return c10::make_intrusive<ProcessGroupCollx>(store, rank, size, timeout);
}

py::dict regStats(const ProcessGroupCollx& pg) {
  auto s = pg.comm()->cache().stats();
  py::dict d;
  d["hits"] = s.hits;
  d["misses"] = s.misses;
  d["evicted"] = s.evicted;
  d["stale"] = s.stale;
  d["refused"] = s.refused;
  d["skipped"] = s.skipped;
  d["entries"] = s.entries;
  d["bytes"] = s.bytes;
  return d;
}

py::dict pathStats(const ProcessGroupCollx& pg) {
  auto s = pg.comm()->paths();
  py::dict d;
  d["ops"] = s.ops;
  d["zero_copy"] = s.zero_copy;
  d["bounced"] = s.bounced;
  d["staged"] = s.staged;
  return d;
}

} // namespace

PYBIND11_MODULE(_c10d, m) {
  m.doc() = "collx as a torch.distributed (c10d) backend";
  // The base class must be known to pybind11 first: torch registers it.
  auto base = py::module::import("torch._C._distributed_c10d").attr("ProcessGroup");

  py::class_<ProcessGroupCollx, c10::intrusive_ptr<ProcessGroupCollx>>(
      m, "ProcessGroupCollx", base)
      .def(py::init(&create), py::arg("store"), py::arg("rank"), py::arg("size"),
           py::arg("timeout"), py::call_guard<py::gil_scoped_release>(),
           "Join the collx communicator of the ranks sharing @store.")
      .def_property_readonly(
          "device", [](const ProcessGroupCollx& pg) { return pg.comm()->device(); },
          "This rank's RDMA device, address and MTU.")
      .def_property_readonly(
          "global_id", [](const ProcessGroupCollx& pg) { return pg.comm()->globalId(); },
          "The communicator's id in debugfs, tracepoints and collx-netmon.")
      .def_property_readonly(
          "timeout_ms", [](const ProcessGroupCollx& pg) { return pg.comm()->timeoutMs(); },
          "The communicator's timeout on every collective's progress.")
      .def("registration_stats", &regStats,
           "The registration cache: hits, misses, evicted, stale, refused, skipped, "
           "entries and pinned bytes.")
      .def("memory_paths", &pathStats,
           "Collectives completed and how many of them ran zero copy, bounced or staged.");
}
