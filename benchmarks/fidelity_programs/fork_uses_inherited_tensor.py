"""A forked child computing with a GPU tensor its parent made."""

import multiprocessing

import torch

inherited = torch.ones(2, device="cuda")


def child():
    for name, run in (("inherited", lambda: inherited + 1), ("new", lambda: torch.ones(1).cuda())):
        try:
            print("child", name, run().device, flush=True)
        except RuntimeError as error:
            print("child", name, type(error).__name__, str(error).splitlines()[0], flush=True)


process = multiprocessing.get_context("fork").Process(target=child)
process.start()
process.join()
