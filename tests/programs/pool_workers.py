"""Work moved to the GPU in multiprocessing workers, with the start method given (``fork``,
``spawn`` or ``forkserver``): a ``Pool``'s ``map``, a ``Pool`` worker still busy when
``terminate()`` ends it (as leaving a ``with Pool`` block does), and a ``Process``.

The main process never touches CUDA, so forked workers may.
"""

import sys
import time
from pathlib import Path

import torch
import torch.multiprocessing as mp


def move(n):
    return torch.ones(n).cuda().numel()


def move_then_wait(n, marker):
    moved = torch.ones(n).cuda()
    Path(marker).write_text(f"moved {moved.numel()}")
    time.sleep(600)


if __name__ == "__main__":
    context = mp.get_context(sys.argv[1])
    marker = Path(sys.argv[2])
    pool = context.Pool(2)
    print("moved", sum(pool.map(move, [4, 8])))
    pool.apply_async(move_then_wait, (2, str(marker)))
    for _ in range(6000):  # until the worker has moved its tensor (at most 10 minutes)
        if marker.exists():
            break
        time.sleep(0.1)
    pool.terminate()
    pool.join()
    worker = context.Process(target=move, args=(16,))
    worker.start()
    worker.join()
