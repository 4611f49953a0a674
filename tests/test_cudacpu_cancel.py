"""Ctrl-C in the main thread stops its own emulated launch, never another thread's."""

import os
import signal
import threading
import time

import numpy as np
import pytest

from atensi.cudacpu import RawModule

SLOW = """
extern "C" __global__ void slow(float* out, int n) {
  float acc = 0.0f;
  for (int i = 0; i < n; ++i) acc = acc * 0.999f + 1.0f;
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
"""


@pytest.mark.slow
def test_ctrl_c_in_the_main_thread_leaves_other_threads_launches_alone():
    kernel = RawModule(SLOW, path="slow.cu").get_function("slow")
    n = np.int32(200_000)
    start = time.perf_counter()
    kernel((4,), (32,), (np.zeros(4, np.float32), n))
    per_block = (time.perf_counter() - start) / 4
    other_out = np.zeros(int(2.0 / per_block) + 1, np.float32)
    main_out = np.zeros(int(1.0 / per_block) + 1, np.float32)
    errors = []

    def other():
        try:
            kernel((len(other_out),), (32,), (other_out, n))
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    worker = threading.Thread(target=other)
    worker.start()
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    # Ctrl-C raises KeyboardInterrupt, even when a shell or test worker started us ignoring SIGINT.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt, match="sesudah selesai.*lengkap"):
            kernel((len(main_out),), (32,), (main_out, n))
    finally:
        timer.join()
        signal.signal(signal.SIGINT, previous)
        worker.join()
    assert errors == [] and (other_out > 0).all()  # the other launch ran to its end
    assert (main_out > 0).all()
    # Alone on the library, Ctrl-C still cuts the launch short.
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer.start()
    main_out[:] = 0
    try:
        with pytest.raises(KeyboardInterrupt, match="block yang belum berjalan dilewati"):
            kernel((len(main_out) * 4,), (32,), (np.zeros(len(main_out) * 4, np.float32), n))
    finally:
        timer.join()
        signal.signal(signal.SIGINT, previous)
