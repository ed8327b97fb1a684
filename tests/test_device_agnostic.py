"""Device-agnostic code: tensor parameters live where the caller chooses.

Each program is the shape of a real bug (or of a real false positive) mined
from public bug-fix commits or found on the precision ledger; the test pins
whether it is reported, by which rule, at which line.
"""

import textwrap

import pytest

from devlint.running.engine import lint_source

PLACES = """

def to_device(batch, device):
    return batch.to(device)
"""
"""Appended to programs that must come from a file that places tensors and picks its device
at run time somewhere (devlint stays silent on CPU-only data code and GPU-only code)."""


def findings(source: str, places: bool = False) -> list[tuple[int, str, str]]:
    text = textwrap.dedent(source) + (PLACES if places else "")
    diagnostics = lint_source(text, "example.py", fixes=False)
    return [(d.line, d.code, d.message) for d in diagnostics]


def lines_and_codes(source: str, places: bool = False) -> list[tuple[int, str]]:
    return [(line, code) for line, code, _ in findings(source, places)]


def test_factory_meeting_a_tensor_parameter_is_a_warning_naming_the_parameter():
    # get_mask_from_lengths: `torch.arange(max_len)` on the CPU against the caller's lengths
    source = """\
        import torch

        def get_mask_from_lengths(lengths):
            max_len = lengths.max().item()
            ids = torch.arange(0, max_len)
            return ids < lengths.unsqueeze(1)
        """
    [(line, code, message)] = findings(source, places=True)
    assert (line, code) == (6, "DVL103")
    assert "created without `device=` at line 5" in message
    assert "passed in as `lengths` at line 3" in message
    assert "this fails when `lengths` is on a GPU" in message


def test_annotated_tensor_parameter_is_evidence():
    source = """\
        import torch

        def add_noise(waveform: torch.Tensor, snr):
            noise = torch.randn(16000)
            return waveform + noise
        """
    assert lines_and_codes(source, places=True) == [(5, "DVL103")]


def test_parameters_without_tensor_evidence_stay_unknown():
    # Python ints and arrays are not tensors: no finding without evidence in the code
    source = """\
        import torch

        def positions(n, offset):
            return torch.arange(n) + offset

        def scale(values, x):
            return torch.ones(3) * values.shape[0] + x
        """
    assert findings(source) == []


def test_file_that_never_places_tensors_is_taken_for_cpu_data_code():
    # a decoder's temporal sampling: frames always come from a CPU video decoder
    source = """\
        import torch

        def temporal_sampling(frames, start, end, num):
            index = torch.linspace(start, end, num)
            index = torch.clamp(index, 0, frames.size(0) - 1).long()
            return torch.index_select(frames, 0, index)
        """
    assert findings(source) == []


def test_cpu_zero_dim_result_joins_the_other_device():
    # peft OFT: `eps` is a CPU 0-dim tensor; `eps * t` lives on t's device
    source = """\
        import torch

        def project(q, eps=1e-5):
            eps = eps * 1 / torch.sqrt(torch.tensor(q.shape[0]))
            eye = torch.zeros((q.size(1), q.size(1)), device=q.device)
            diff = q - eye
            return torch.where(diff.norm() <= eps, q, eye + eps * diff)
        """
    assert findings(source) == []


def test_ctc_loss_targets_may_stay_on_the_cpu():
    source = """\
        import torch
        from torch import nn

        class Aligner(nn.Module):
            def __init__(self):
                super().__init__()
                self.ctc = nn.CTCLoss()

            def forward(self, logprob, key_lens):
                target = torch.arange(1, 10).unsqueeze(0)
                return self.ctc(logprob, target, key_lens, key_lens)
        """
    assert findings(source) == []


def test_hard_coded_cuda_meeting_a_tensor_parameter_is_reported_where_it_is_hard_coded():
    # dino knn_classifier: `torch.zeros(k, c).cuda()` scattered with the caller's labels
    source = """\
        import torch

        def knn(train_labels, k, num_classes):
            one_hot = torch.zeros(k, num_classes).cuda()
            neighbours = train_labels.view(1, -1)
            one_hot.scatter_(1, neighbours, 1)
            return one_hot
        """
    [(line, code, message)] = findings(source, places=True)
    assert (line, code) == (4, "DVL101")
    assert "(hard-coded)" in message
    assert "at line 6" in message
    assert "this fails when `train_labels` is on the CPU or another GPU" in message


def test_cuda_typed_constructor_as_out_is_hard_coded():
    # NVIDIA tacotron2 get_mask_from_lengths
    source = """\
        import torch

        def get_mask_from_lengths(lengths):
            max_len = torch.max(lengths).item()
            ids = torch.arange(0, max_len, out=torch.cuda.LongTensor(max_len))
            return ids < lengths.unsqueeze(1)
        """
    [(line, code, message)] = findings(source, places=True)
    assert (line, code) == (5, "DVL101")
    assert "`torch.cuda.LongTensor(max_len)` is on cuda (hard-coded)" in message


def test_cuda_inside_forward_meets_the_module_inputs():
    source = """\
        import torch
        from torch import nn

        class Loss(nn.Module):
            def forward(self, embeddings, labels):
                eye = torch.eye(labels.size(0)).cuda()
                return embeddings * eye
        """
    [(line, code, message)] = findings(source, places=True)
    assert (line, code) == (6, "DVL101")
    assert "the module's device is the CPU or another GPU" in message


def test_device_taken_from_the_caller_is_not_hard_coded():
    source = """\
        import torch

        def gather(index, feats):
            index_all = torch.zeros(4, device=index.device)
            return feats.index_copy_(0, index_all, feats)

        gather(torch.zeros(4).cuda(), torch.ones(4))
        """
    assert [code for _, code, _ in findings(source) if code == "DVL101"] == []


@pytest.mark.parametrize(
    "guard",
    ["x.cuda(args.gpu)", "x.to(f'cuda:{local_rank}')"],
)
def test_this_process_gpu_is_not_against_the_hard_coded_current_gpu(guard):
    source = f"""\
        import torch

        def step(x, args, local_rank):
            y = torch.ones(3).cuda()
            return {guard} + y
        """
    assert findings(source) == []


def test_gpu_only_code_that_hard_codes_cuda_everywhere_is_consistent():
    # no run-time device anywhere in the file: `.cuda()` is the convention, not a slip
    source = """\
        import torch

        def restrict_neighborhood(h, w):
            return torch.zeros(h * w, h * w).cuda()

        def label_propagation(aff, segs):
            mask = restrict_neighborhood(4, 4)
            return torch.mm(segs.view(2, -1), aff * mask)
        """
    assert findings(source) == []


def test_helper_only_called_with_cpu_tensors_is_silent():
    # peft FRoD: the caller moves every matrix to the CPU before the decomposition
    source = """\
        import torch

        def projection(matrices, alpha):
            stacked = torch.cat(matrices, dim=0)
            return stacked + alpha * torch.eye(stacked.shape[1])

        def init(weights, device):
            matrices = [w.detach().cpu() for w in weights]
            return projection(matrices, 0.1).to(device)
        """
    assert findings(source) == []


def test_parameter_whose_device_the_code_tests_is_left_to_its_branches():
    # dino PCA.apply: one branch per device of `x`
    source = """\
        import torch

        def apply(x, dvt, device):
            if x.is_cuda:
                return torch.mm(torch.cuda.FloatTensor(dvt), x.t())
            return torch.mm(torch.FloatTensor(dvt), x.transpose(0, 1)).to(device)
        """
    assert findings(source) == []


def test_einops_and_variable_keep_their_input_device():
    source = """\
        import torch
        from einops import rearrange
        from torch import nn
        from torch.autograd import Variable

        class VAE(nn.Module):
            def forward(self, img):
                logits = rearrange(img, "b n h w -> b (h w) n")
                g = torch.log(torch.Tensor([0.5]))
                return logits - Variable(g)
        """
    assert lines_and_codes(source) == [(10, "DVL103")]


def test_indexing_with_an_index_tensor_keeps_dimensions():
    # NVIDIA tacotron2 STFT.inverse: `window_sum[idx]` is 1-d, not a 0-dim exception
    source = """\
        import numpy as np
        import torch
        import torch.nn.functional as F

        def inverse(magnitude, basis, window_sum):
            out = F.conv_transpose1d(magnitude, basis)
            idx = torch.from_numpy(np.where(window_sum > 0)[0])
            window = torch.from_numpy(window_sum)
            out[:, :, idx] /= window[idx]
            return out
        """
    assert lines_and_codes(source, places=True) == [(9, "DVL101")]


def test_cpu_scalar_tensor_takes_the_device_of_an_unseen_operand():
    # mmcv point_sample: torch.where(x0 < 0, torch.tensor(0), x0) with x0 the analysis cannot see
    source = """\
        import torch
        import torch.nn.functional as F

        def bilinear(im, grid):
            x0 = torch.floor(grid[:, 0]).long()
            x0 = torch.where(x0 < 0, torch.tensor(0), x0)
            padded = F.pad(im, pad=[1, 1, 1, 1])
            return torch.gather(padded, 2, x0.unsqueeze(1))
        """
    assert findings(source, places=True) == []


def test_parameter_in_one_branch_and_buffer_in_the_other_is_module_state():
    # generative-models AlphaBlender.mix_factor
    source = """\
        import torch
        from torch import nn

        class Blender(nn.Module):
            def __init__(self, alpha, fixed):
                super().__init__()
                if fixed:
                    self.register_buffer("mix", torch.Tensor([alpha]))
                else:
                    self.register_parameter("mix", nn.Parameter(torch.Tensor([alpha])))

            def forward(self, x):
                return x * torch.sigmoid(self.mix)
        """
    assert findings(source) == []


def test_caller_passing_a_tensor_of_unknown_device_keeps_the_parameter_symbol():
    # speechbrain VAD.get_boundaries: apply_threshold's result says nothing about its device
    source = """\
        import torch

        def boundaries(prob_th):
            shifted = torch.roll(prob_th, dims=1, shifts=1)
            return torch.cat((prob_th + shifted, torch.Tensor([1.0]).unsqueeze(0)), dim=1)

        def segments(vad, wav):
            return boundaries(torch.sigmoid(vad.logits(wav)) > 0.5)
        """
    assert lines_and_codes(source, places=True) == [(5, "DVL103")]


def test_tensor_filled_in_for_a_left_out_argument_keeps_its_cpu_device():
    # allennlp's CRF (#5313) and lightweight-gan's InitConv: the default path builds the mask or
    # labels on the CPU, beside inputs on the module's GPU; joined with the caller's tensor it
    # became unknown and the bug went silent
    source = """\
        import torch
        from torch import nn

        class Crf(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.embed = nn.Embedding(n, 8)

            def forward(self, inputs: torch.Tensor, mask: torch.Tensor = None):
                if mask is None:
                    mask = torch.ones(*inputs.size(), dtype=torch.bool)
                else:
                    mask = mask.to(torch.bool)
                return inputs * mask

            def labels(self, x, y=None):
                y = y if y is not None else torch.randint(3, x.shape[:1])
                return self.embed(y)
        """
    found = findings(source)
    assert [(line, code) for line, code, _ in found] == [(14, "DVL103"), (18, "DVL103")]
    assert "created without `device=` at line 11" in found[0][2]


def test_tensor_filled_in_on_the_device_of_the_other_inputs_is_silent():
    source = """\
        import torch
        from torch import nn

        class Crf(nn.Module):
            def forward(self, inputs: torch.Tensor, mask: torch.Tensor = None):
                if mask is None:
                    mask = torch.ones(*inputs.size(), device=inputs.device)
                return inputs * mask

            def moved(self, inputs: torch.Tensor, mask: torch.Tensor = None):
                if mask is None:
                    mask = torch.ones(*inputs.size())
                mask = mask.to(inputs.device)
                return inputs * mask
        """
    assert findings(source) == []


def test_type_with_a_typed_tensor_class_converts_to_that_class_device():
    # coqui TTS forward_tts: `g.type(torch.LongTensor)` copies the speaker ids to the cpu
    # before the speaker embedding, which lives with the module
    source = """\
        import torch
        from torch import nn

        class Encoder(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.emb_g = nn.Embedding(n, 8)

            def encode(self, x: torch.Tensor, g: torch.Tensor):
                g = g.type(torch.LongTensor)
                return self.emb_g(g)

            def kept(self, x: torch.Tensor, g: torch.Tensor):
                return self.emb_g(g.type(torch.long))
        """
    [(line, code, message)] = findings(source)
    assert (line, code) == (11, "DVL105")
    assert "converted to `torch.LongTensor` at line 10" in message


def test_unsqueezed_cpu_tensor_is_never_a_zero_dim_operand():
    # flair's Viterbi decoder: `scores[:n, t - 1].unsqueeze(1)` may index down to 0-dim, but
    # unsqueeze gives it a dimension back, so PyTorch's cpu-scalar exception cannot apply
    source = """\
        import torch

        def step(features: torch.Tensor, n):
            scores = torch.zeros(features.size(0), 3, n)
            return features[:, 1] + scores[:, 0].unsqueeze(1)

        def scalar(features: torch.Tensor, n):
            scores = torch.zeros(n)
            return features[:, 1] + scores[0]
        """
    assert lines_and_codes(source, places=True) == [(5, "DVL103")]


def test_items_of_a_parameter_shown_to_be_tensors_live_where_the_caller_chooses():
    # speechbrain concat_padded_features: `lens` is a list of length tensors on the batch's
    # device; flair's Viterbi decoder unpacks its features from a tuple parameter
    source = """\
        import torch

        def concat(feats, lens):
            item_lengths = torch.tensor([item.size(0) for item in feats])
            lens = torch.concat([len_rel.unsqueeze(0) for len_rel in lens])
            return lens * item_lengths.unsqueeze(-1)

        def decode(features_tuple, n):
            features, lengths = features_tuple
            scores = torch.zeros(features.size(0), 3, n)
            return features[:, 1] + scores[:, 0].unsqueeze(1)
        """
    found = findings(source, places=True)
    assert [(line, code) for line, code, _ in found] == [(6, "DVL103"), (11, "DVL103")]
    assert "passed in as `features_tuple` at line 8" in found[1][2]


def test_items_of_a_parameter_without_tensor_evidence_stay_unknown():
    source = """\
        import torch

        def lengths(sizes, extra):
            total = torch.tensor([s for s in sizes])
            first, second = extra
            return total + first + second
        """
    assert findings(source, places=True) == []


def test_method_of_a_placed_model_runs_with_the_callers_tensors():
    # the GPT tutorials' sampling: `m.generate(context)` with a context built without device=
    # while the model was moved to the device; generate feeds it to `self(...)`
    source = """\
        import torch
        from torch import nn

        device = "cuda" if torch.cuda.is_available() else "cpu"

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(10, 4)

            def forward(self, idx):
                return self.emb(idx)

            def generate(self, idx, steps):
                for _ in range(steps):
                    logits = self(idx[:, -3:])
                    nxt = torch.multinomial(logits[:, -1, :].softmax(-1), 1)
                    idx = torch.cat((idx, nxt), dim=1)
                return idx

        m = Model().to(device)
        print(m.generate(torch.zeros((1, 1), dtype=torch.long), 5))
        """
    [(line, code, message)] = findings(source)
    assert (line, code) == (16, "DVL103")
    assert "created without `device=` at line 22" in message
    assert "moved to `device` at line 21" in message


def test_method_of_a_model_left_on_the_cpu_is_silent():
    source = """\
        import torch
        from torch import nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(10, 4)

            def forward(self, idx):
                return self.emb(idx)

            def generate(self, idx):
                return self(idx[:, -3:])

        m = Model()
        print(m.generate(torch.zeros((1, 1), dtype=torch.long)))
        """
    assert findings(source, places=True) == []


def test_device_parameter_left_at_its_hard_coded_default_is_reported_at_the_call():
    # sgm do_sample: get_batch(keys, n) leaves device="cuda" while do_sample has its own device
    source = """\
        import torch

        def get_batch(keys, n, device="cuda"):
            return torch.tensor(keys).to(device).repeat(n, 1)

        def do_sample(model, keys, n, device="cuda"):
            batch = get_batch(keys, n)
            return model(batch.to(device))
        """
    [(line, code, message)] = [f for f in findings(source) if f[1] == "DVL101"]
    assert (line, code) == (7, "DVL101")
    assert 'leaves `device` at its hard-coded default `"cuda"` (line 3)' in message
    assert "passed in as `device` at line 6" in message
    assert "pass `device=device`" in message


def test_method_leaving_its_device_default_while_the_constructor_has_one_is_reported():
    # sgm SamplingPipeline: self._load_model() keeps device="cuda" though __init__ got a device
    source = """\
        import torch

        class Pipeline:
            def __init__(self, path, device="cuda"):
                self.device = device
                self.model = self._load_model(path)

            def _load_model(self, path, device="cuda"):
                model = torch.load(path, map_location="cpu")
                return model.to(device)
        """
    assert [(line, code) for line, code in lines_and_codes(source) if code == "DVL101"] == [
        (6, "DVL101")
    ]


@pytest.mark.parametrize(
    ("call", "reported"),
    [
        ("get_batch(keys, 2)", 1),  # the control: the caller's device is not passed
        ("get_batch(keys, 2, device)", 0),
        ("get_batch(keys, 2, device=device)", 0),
        ("get_batch(keys, 2, **options)", 0),  # may pass it
    ],
)
def test_device_default_is_reported_only_when_the_caller_has_a_device_it_does_not_pass(
    call, reported
):
    source = f"""\
        import torch

        def get_batch(keys, n, device="cuda"):
            return torch.tensor(keys).to(device).repeat(n, 1)

        def unread(keys, device="cuda"):
            return keys

        def no_device_here(keys):
            return get_batch(keys, 2)

        def do_sample(keys, device, options):
            unread(keys)
            return {call}
        """
    codes = [code for _, code in lines_and_codes(source)]
    assert codes.count("DVL101") == reported


def test_torchaudio_transform_with_a_buffer_is_a_cpu_module():
    # speechbrain stoi_loss: a Resample (its kernel a buffer) built on the CPU, applied to the
    # caller's batch; separate_file: the same against audio moved to self.device
    source = """\
        import torch
        import torchaudio
        from torchaudio.transforms import MelSpectrogram

        def stoi_loss(y_pred_batch, lens):
            y_pred_batch = torch.squeeze(y_pred_batch, dim=-1)
            resampler = torchaudio.transforms.Resample(16000, 10000)
            return resampler(y_pred_batch)

        class Separator:
            def separate_file(self, path):
                batch, rate = torchaudio.load(path)
                batch = batch.to(self.device)
                return MelSpectrogram(rate)(batch)
        """
    found = findings(source)
    assert [(line, code) for line, code, _ in found] == [(8, "DVL102"), (14, "DVL102")]
    assert "`resampler` is on cpu (created at line 7)" in found[0][2]


def test_torchaudio_transform_without_a_buffer_follows_its_input():
    source = """\
        import torch
        import torchaudio

        def to_db(spec):
            spec = torch.squeeze(spec, dim=-1)
            return torchaudio.transforms.AmplitudeToDB()(spec)
        """
    assert lines_and_codes(source, places=True) == []


@pytest.mark.parametrize(("picks_gpu", "expected"), [(False, [(5, "DVL101")]), (True, [])])
def test_bare_cuda_is_the_gpu_a_program_that_sets_its_device_moved_its_data_to(picks_gpu, expected):
    # microsoft/LoRA gpt2_beam: `lm_net.cuda()` meets a query moved `.to(args.device)`, after
    # parse_gpu called torch.cuda.set_device(local_rank) and set args.device to that GPU
    source = """\
        import torch

        def beam(query, args):
            query = query.to(args.device)
            scores = torch.zeros(3).cuda()
            return scores + query

        SET_DEVICE
        """
    source = source.replace("SET_DEVICE", "torch.cuda.set_device(0)" if picks_gpu else "")
    assert lines_and_codes(source, places=True) == expected


def test_bare_cuda_still_meets_a_tensor_passed_in_after_set_device():
    # dino eval_knn (a mined bug): the caller's labels may be on the cpu whatever GPU is set
    source = """\
        import torch

        def knn(train_labels, k, num_classes):
            one_hot = torch.zeros(k, num_classes).cuda()
            one_hot.scatter_(1, train_labels.view(1, -1), 1)
            return one_hot

        torch.cuda.set_device(0)
        """
    assert lines_and_codes(source, places=True) == [(4, "DVL101")]


@pytest.mark.parametrize(
    ("reduced", "expected"), [("sum_q", []), ("torch.ones(1).cuda()", [(8, "DVL101")])]
)
def test_bare_cuda_is_the_gpu_of_a_tensor_the_function_all_reduces(reduced, expected):
    # SlowFast's distributed_sinkhorn: `Q` goes through all_reduce, so it is on this
    # process's GPU (set up elsewhere with set_device), which a bare `.cuda()` is too
    source = """\
        import torch
        import torch.distributed as dist

        def distributed_sinkhorn(q):
            sum_q = torch.sum(q)
            dist.all_reduce(REDUCED)
            q /= sum_q
            r = torch.ones(q.shape[0]).cuda() / q.shape[0]
            for _ in range(3):
                q *= (r / torch.sum(q, dim=1)).unsqueeze(1)
            return q

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        """
    assert lines_and_codes(source.replace("REDUCED", reduced), places=True) == expected


def test_static_helper_called_through_self_keeps_each_argument():
    # allennlp fbeta_measure_multi_label: `Metric.detach_tensors` is a staticmethod; called
    # through `self` it gets no `self`, so `gold_labels` stays the caller's `gold_labels`
    source = """\
        import torch

        class Metric:
            @staticmethod
            def detach_two(a, b):
                return a.detach(), b.detach()

        class FBeta(Metric):
            def __call__(self, predictions, gold_labels):
                predictions, gold_labels = self.detach_two(predictions, gold_labels)
                mask = gold_labels.bool().unsqueeze(-1)
                indices = torch.arange(10)
                return indices[mask]
        """
    [(line, code, message)] = findings(source, places=True)
    assert (line, code) == (13, "DVL103")
    assert "`mask` is on the device of `gold_labels`" in message


def test_star_arguments_mapped_by_a_generator_keep_each_argument():
    # allennlp fairness_metrics: `detach_tensors(*tensors)` returns
    # `(x.detach() ... for x in tensors)`, unpacked back into the caller's names
    source = """\
        import torch

        def detach_tensors(*tensors):
            return (x.detach() if isinstance(x, torch.Tensor) else x for x in tensors)

        def update(predicted_labels: torch.Tensor, protected_labels: torch.Tensor):
            predicted_labels, protected_labels = detach_tensors(predicted_labels, protected_labels)
            counts = torch.zeros(4)
            return counts.scatter_add_(0, protected_labels.flatten(), predicted_labels.flatten())
        """
    [(line, code, message)] = findings(source, places=True)
    assert (line, code) == (9, "DVL103")
    assert "the device of `protected_labels`" in message
