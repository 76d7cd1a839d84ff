"""A stand-in for NVML's ``pynvml`` (the harness's boundary with the driver), copied into a
test project as ``pynvml.py``: the GPUs it lists come from ``FAKE_NVML_GPUS``, a JSON list of
``{"name", "total_mib", "free_mib"}`` (and optionally ``serial``, ``vbios``); their UUIDs are
``GPU-fake-<index>``, their serials ``fake-serial-<index>``. A GPU named in
``FAKE_NVML_RESET_REQUIRED`` answers NVML_ERROR_RESET_REQUIRED to an xdist worker (it went bad
after the run started)."""

import json
import os
from types import SimpleNamespace

NVML_CLOCK_MEM = 2
_GPUS = json.loads(os.environ.get("FAKE_NVML_GPUS", "[]"))


NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_GPU_IS_LOST = 15
NVML_ERROR_RESET_REQUIRED = 16


class NVMLError(Exception):
    def __init__(self, message, value=0):
        super().__init__(message)
        self.value = value


def nvmlInit():
    pass


def nvmlSystemGetDriverVersion():
    return "999.1"


def nvmlSystemGetCudaDriverVersion_v2():
    return 13000


def nvmlDeviceGetCount():
    return len(_GPUS)


def nvmlDeviceGetHandleByIndex(index):
    if not 0 <= index < len(_GPUS):
        raise NVMLError("Invalid Argument")
    return index


def nvmlDeviceGetHandleByUUID(uuid):
    if "PYTEST_XDIST_WORKER" in os.environ and uuid in os.environ.get("FAKE_NVML_RESET_REQUIRED", "").split(","):
        raise NVMLError("GPU requires reset", NVML_ERROR_RESET_REQUIRED)
    for index in range(len(_GPUS)):
        if nvmlDeviceGetUUID(index) == uuid:
            return index
    raise NVMLError("Not Found", NVML_ERROR_NOT_FOUND)


def nvmlDeviceGetUUID(handle):
    return f"GPU-fake-{handle}"


def nvmlDeviceGetName(handle):
    return _GPUS[handle]["name"]


def nvmlDeviceGetMemoryInfo(handle):
    gpu = _GPUS[handle]
    return SimpleNamespace(total=gpu["total_mib"] << 20, free=gpu["free_mib"] << 20, used=0)


def nvmlDeviceGetMaxClockInfo(handle, clock):
    return 2619


def nvmlDeviceGetMemoryBusWidth(handle):
    return 5120


def nvmlDeviceGetSerial(handle):
    return _GPUS[handle].get("serial", f"fake-serial-{handle}")


def nvmlDeviceGetBoardPartNumber(handle):
    return "692-2G520-0200-000"


def nvmlDeviceGetVbiosVersion(handle):
    return _GPUS[handle].get("vbios", "96.00.99.00.01")


def nvmlDeviceGetEnforcedPowerLimit(handle):
    return 700000
