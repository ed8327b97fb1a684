"""lucidrains/rotary-embedding-torch: the embedding built and moved to the GPU as a
transformer holds it, applied as the README shows: queries and keys rotated (cached and
not, with an offset, with cached keys), xpos scaling on both, and axial pixel frequencies."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive


def body(context: drive.Context) -> None:
    context.import_path()
    import torch
    from rotary_embedding_torch import RotaryEmbedding, apply_rotary_emb

    q, k = torch.randn(1, 2, 8, 16).cuda(), torch.randn(1, 2, 8, 16).cuda()
    for cache in (True, False):
        rotary = RotaryEmbedding(dim=8, cache_if_possible=cache, learned_freq=not cache).cuda()
        rotary.rotate_queries_or_keys(q)
        rotary.rotate_queries_or_keys(q, offset=2)
        rotary.rotate_queries_with_cached_keys(q[:, :, -1:], k)
        xpos = RotaryEmbedding(dim=8, use_xpos=True, cache_if_possible=cache).cuda()
        xpos.rotate_queries_and_keys(q, k)
    pixel = RotaryEmbedding(dim=4, freqs_for="pixel", max_freq=16).cuda()
    freqs = pixel.get_axial_freqs(2, 4, 3)
    apply_rotary_emb(freqs, torch.randn(1, 2, 4, 3, 16).cuda())


drive.main(body)
