"""A forked child using CUDA after its parent asked torch.cuda.is_available() and nothing more."""

import multiprocessing

import torch


def child():
    try:
        print("child", torch.ones(1, device="cuda").device, flush=True)
    except RuntimeError as error:
        print("child", type(error).__name__, str(error).splitlines()[0], flush=True)


print("available", torch.cuda.is_available())
process = multiprocessing.get_context("fork").Process(target=child)
process.start()
process.join()
