"""Exceptions raised by atensi.cudacpu."""


class CudaCpuError(RuntimeError):
    """Compiling or running a kernel on the CPU failed."""


class BarrierDeadlockError(CudaCpuError):
    """Some threads of a block wait at a barrier that the others never reach.

    On a GPU such a kernel hangs or gives undefined results; here it is
    reported with the kernel name, the block and the thread indices.
    """


class LaunchConfigError(CudaCpuError, ValueError):
    """grid/block/shared_mem outside what a GPU accepts."""


class SanitizerError(CudaCpuError):
    """AddressSanitizer or ThreadSanitizer reported a problem."""

    def __init__(self, message: str, report: str = ""):
        super().__init__(message)
        self.report = report


class OutOfBoundsWriteError(CudaCpuError):
    """A kernel wrote past the end (or before the start) of an array argument.

    Seen without a sanitizer through guard bytes around each array; the .cu
    line comes from AddressSanitizer (``sanitize="address"``).
    """
