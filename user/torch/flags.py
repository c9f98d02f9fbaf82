# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""Print the make variables that build a torch C++ extension against the
installed torch: what torch.utils.cpp_extension would pass, for a plain
Makefile (python3 flags.py > build/flags.mk)."""
import sysconfig

import torch
import torch.utils.cpp_extension as ext

incs = ext.include_paths() + [sysconfig.get_paths()["include"]]
defs = ["-D_GLIBCXX_USE_CXX11_ABI=%d" % int(torch._C._GLIBCXX_USE_CXX11_ABI)]
# pybind11 must share torch's internals to see its ProcessGroup and Store
# types (torch/utils/cpp_extension.py: "Pybind11 ABI constants").
for name in ("COMPILER_TYPE", "STDLIB", "BUILD_ABI"):
    val = getattr(torch._C, "_PYBIND11_" + name, None)
    if val is not None:
        defs.append('-DPYBIND11_%s=\\"%s\\"' % (name, val))
print("TORCH_VERSION := " + torch.__version__)
print("TORCH_CPPFLAGS := " + " ".join("-isystem " + i for i in incs) + " " + " ".join(defs))
print("TORCH_LIBDIR := " + ext.library_paths()[0])
print("EXT_SUFFIX := " + sysconfig.get_config_var("EXT_SUFFIX"))
