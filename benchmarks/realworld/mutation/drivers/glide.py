"""openai/glide-text2im: the text-conditional base, upsampler and inpainting models built small
(random weights) and sampled as the notebooks do: classifier-free guidance, DDPM and DDIM
sampling, the upsampler on the base model's output, inpainting."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch

TINY = dict(
    image_size=8,
    num_channels=32,
    num_res_blocks=1,
    num_head_channels=16,
    channel_mult="1",
    attention_resolutions="8",
    text_ctx=6,
    xf_width=32,
    xf_layers=1,
    xf_heads=2,
    diffusion_steps=20,
    timestep_respacing="3",
    use_fp16=False,
)


class _Tokens:
    """A stand-in for the BPE encoder (its vocabulary files are data, not extracted)."""

    n_vocab = 50
    end_token = 49

    def encode(self, text: str) -> list[int]:
        return [ord(c) % 40 for c in text]

    def padded_tokens_and_mask(self, tokens: list[int], text_ctx: int):
        tokens = tokens[:text_ctx]
        padding = text_ctx - len(tokens)
        return tokens + [self.end_token] * padding, [True] * len(tokens) + [False] * padding


def body(context: drive.Context) -> None:
    context.import_path()
    drive.stub_module("glide_text2im.tokenizer.bpe", get_encoder=_Tokens)
    from glide_text2im.model_creation import (
        create_model_and_diffusion,
        model_and_diffusion_defaults,
        model_and_diffusion_defaults_upsampler,
    )

    device = torch.device("cuda")
    options = {**model_and_diffusion_defaults(), **TINY}
    model, diffusion = create_model_and_diffusion(**options)
    model.eval().to(device)
    tokens, mask = model.tokenizer.padded_tokens_and_mask(model.tokenizer.encode("a cat"), 6)
    empty, empty_mask = model.tokenizer.padded_tokens_and_mask([], 6)
    kwargs = dict(
        tokens=torch.tensor([tokens, empty], device=device),
        mask=torch.tensor([mask, empty_mask], dtype=torch.bool, device=device),
    )

    def guided(x_t, ts, **kw):
        half = x_t[: len(x_t) // 2]
        out = model(torch.cat([half, half], dim=0), ts, **kw)
        eps, rest = out[:, :3], out[:, 3:]
        cond, uncond = torch.split(eps, len(eps) // 2, dim=0)
        half_eps = uncond + 3.0 * (cond - uncond)
        return torch.cat([torch.cat([half_eps, half_eps], dim=0), rest], dim=1)

    with torch.no_grad():
        samples = diffusion.p_sample_loop(
            guided,
            (2, 3, 8, 8),
            device=device,
            clip_denoised=True,
            progress=False,
            model_kwargs=kwargs,
        )[:1]
        model.del_cache()
        diffusion.ddim_sample_loop(
            model,
            (1, 3, 8, 8),
            clip_denoised=True,
            progress=False,
            model_kwargs=dict(tokens=kwargs["tokens"][:1], mask=kwargs["mask"][:1]),
        )

        up_options = {
            **model_and_diffusion_defaults_upsampler(),
            **TINY,
            "image_size": 16,
            "channel_mult": "1,2",
        }
        upsampler, up_diffusion = create_model_and_diffusion(**up_options)
        upsampler.eval().to(device)
        up_kwargs = dict(
            low_res=((samples + 1) * 127.5).round() / 127.5 - 1,
            tokens=kwargs["tokens"][:1],
            mask=kwargs["mask"][:1],
        )
        up_diffusion.p_sample_loop(
            upsampler,
            (1, 3, 16, 16),
            noise=torch.randn((1, 3, 16, 16), device=device),
            device=device,
            clip_denoised=True,
            progress=False,
            model_kwargs=up_kwargs,
        )

        inpaint_options = {**model_and_diffusion_defaults(), **TINY, "inpaint": True}
        inpaint, inpaint_diffusion = create_model_and_diffusion(**inpaint_options)
        inpaint.eval().to(device)
        image = torch.zeros((1, 3, 8, 8), device=device)
        image_mask = torch.ones((1, 1, 8, 8), device=device)
        image_mask[:, :, 4:] = 0
        inpaint_diffusion.p_sample_loop(
            inpaint,
            (1, 3, 8, 8),
            device=device,
            clip_denoised=True,
            progress=False,
            model_kwargs=dict(
                tokens=kwargs["tokens"][:1],
                mask=kwargs["mask"][:1],
                inpaint_image=image,
                inpaint_mask=image_mask,
            ),
        )


drive.main(body)
