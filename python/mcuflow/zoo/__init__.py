"""mcuflow.zoo: reference models with seeded weights, deterministic data and known counts.

    from mcuflow import zoo
    zoo.names()                                  # ['ds_cnn', 'fc_autoencoder', ...]
    m = zoo.get("ds_cnn", seed=0)                # or checkpoint="ds_cnn.pt" for trained weights
    ep = m.export()                              # torch.export.ExportedProgram
    program = mcuflow.compile(ep, target="cortex-m4", calibration=m.calibration(100))
    m.counts() == (m.reference_parameters, m.reference_macs)

A model is described once by a :class:`ModelSpec` and registered with one line,
``register(ModelSpec(...))``, in any module of this package (every module here is imported
when the registry is first used). ``get`` builds the module under the seed, gives it
realistic BatchNorm statistics from the task's own synthetic data (or loads a checkpoint) and
returns a :class:`ZooModel` in eval mode.

Data: ``calibration(n, seed)`` and ``evaluation(n, seed)`` draw from disjoint random streams of
the same task-shaped generator (MFCC-like frames, natural-looking images, log-mel frames), so
calibration and evaluation never share a sample; BatchNorm statistics use a third stream.
Parameter counts are weights + biases after BatchNorm folding; MACs count convolutions and
fully connected layers only (pooling, bias, BatchNorm and adds excluded), as MLPerf Tiny does.

This module imports torch only when a model is built, so the CLI stays quick.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from ..errors import InputError

if TYPE_CHECKING:
    import torch

__all__ = ["ModelSpec", "ZooModel", "register", "names", "spec", "get", "count_parameters_and_macs"]

# Random streams of one (model, seed): never shared, so calibration and evaluation data differ.
_STREAM_BATCHNORM, _STREAM_CALIBRATION, _STREAM_EVALUATION = 0, 1, 2
_BATCHNORM_BATCHES, _BATCHNORM_BATCH_SIZE = 4, 16


@dataclass(frozen=True)
class ModelSpec:
    """Everything the zoo knows about a model before building it.

    ``build()`` returns a fresh module (called with torch's RNG seeded); ``sample(rng, n)``
    returns ``n`` float32 inputs shaped ``(n, *input_shape[1:])`` like the task's real data.
    """

    name: str
    task: str
    build: Callable[[], Any]
    input_shape: tuple[int, ...]
    sample: Callable[[np.random.Generator, int], np.ndarray]
    reference_parameters: Optional[int] = None
    reference_macs: Optional[int] = None
    reference: str = ""  # where the layout and the reference counts come from
    # "classes" (scores: top-1 is meaningful), "reconstruction" (of the input) or "features" (left as built)
    output: str = "classes"
    # A streaming model (mcuflow.streaming layers, batch 1): an input is one frame (time on the last
    # dim), samples are consecutive frames of one stream, outputs keep time last too.
    streaming: bool = False


_REGISTRY: dict[str, ModelSpec] = {}
_loaded = False


def register(model_spec: ModelSpec) -> ModelSpec:
    if model_spec.name in _REGISTRY:
        raise ValueError(f"zoo model {model_spec.name!r} is registered twice")
    _REGISTRY[model_spec.name] = model_spec
    return model_spec


def _load_modules() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{module.name}")


def names() -> list[str]:
    _load_modules()
    return sorted(_REGISTRY)


def spec(name: str) -> ModelSpec:
    _load_modules()
    if name not in _REGISTRY:
        raise InputError(f"unknown zoo model '{name}'; known: {', '.join(names())}")
    return _REGISTRY[name]


def _draw(model_spec: ModelSpec, seed: int, stream: int, n: int) -> np.ndarray:
    """``n`` inputs of one random stream of (model, seed), C-contiguous float32."""
    rng = np.random.default_rng(np.random.SeedSequence([zlib.crc32(model_spec.name.encode()), int(seed), stream]))
    return np.ascontiguousarray(model_spec.sample(rng, int(n)), dtype=np.float32)


@dataclass
class ZooModel:
    """A zoo model in eval mode with its data and its reference counts."""

    spec: ModelSpec
    module: Any  # torch.nn.Module
    seed: int
    checkpoint: Optional[str] = None
    _counts: Optional[tuple[int, int]] = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def reference_parameters(self) -> Optional[int]:
        return self.spec.reference_parameters

    @property
    def reference_macs(self) -> Optional[int]:
        return self.spec.reference_macs

    def calibration(self, n: int = 100, seed: Optional[int] = None) -> np.ndarray:
        """``n`` calibration inputs, ``(n, *input_shape[1:])`` float32 (seed defaults to the model's)."""
        return self._data(_STREAM_CALIBRATION, n, seed)

    def evaluation(self, n: int = 100, seed: Optional[int] = None) -> np.ndarray:
        """``n`` evaluation inputs, disjoint from the calibration stream."""
        return self._data(_STREAM_EVALUATION, n, seed)

    def _data(self, stream: int, n: int, seed: Optional[int]) -> np.ndarray:
        return _draw(self.spec, self.seed if seed is None else seed, stream, n)

    def example_input(self) -> tuple["torch.Tensor", ...]:
        import torch

        return (torch.from_numpy(self.evaluation(1)),)

    def export(self):
        """``torch.export.export`` of the module with the example input."""
        import torch

        return torch.export.export(self.module, self.example_input())

    def counts(self) -> tuple[int, int]:
        """(parameters after BatchNorm folding, MACs) measured on the module."""
        if self._counts is None:
            import copy

            # A streaming module's forward updates its state, which export would take as the initial one.
            module = copy.deepcopy(self.module) if self.spec.streaming else self.module
            self._counts = count_parameters_and_macs(module, self.example_input())
        return self._counts


def get(name: str | ModelSpec, seed: int = 0, checkpoint: Optional[str | os.PathLike] = None) -> ZooModel:
    """Builds zoo model ``name``: seeded random weights with realistic BatchNorm statistics, or
    the weights of ``checkpoint`` (a ``state_dict`` saved with ``torch.save``). A ``ModelSpec``
    in place of the name builds a model described elsewhere (bench/models/) the same way."""
    import torch

    model_spec = name if isinstance(name, ModelSpec) else spec(name)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        module = model_spec.build()
        if checkpoint is None:
            _init_weights(module)
    if checkpoint is None:
        data = torch.from_numpy(_draw(model_spec, seed, _STREAM_BATCHNORM, _BATCHNORM_BATCHES * _BATCHNORM_BATCH_SIZE))
        # A stream's frames go in as windows of consecutive frames (its layers take batch 1).
        frames = torch.cat(list(data), dim=-1)[None] if model_spec.streaming else data
        batches = list(frames.split(_BATCHNORM_BATCH_SIZE, dim=-1 if model_spec.streaming else 0))
        _realistic_batchnorm(module, batches, torch.Generator().manual_seed(int(seed)))
        if model_spec.output != "features":
            _realistic_output(module, batches, model_spec.output, model_spec.streaming)
    else:
        _load_checkpoint(module, checkpoint, model_spec.name)
    if model_spec.streaming:  # export takes the buffers' values (a checkpoint's too) as the initial state
        from ..streaming import reset_streaming_state

        reset_streaming_state(module)
    module.eval()
    return ZooModel(model_spec, module, int(seed), None if checkpoint is None else str(checkpoint))


_SMOOTH_KERNEL_SHARE = 0.85  # share of a spatial kernel's variance common to all its taps


def _init_weights(module) -> None:
    """He-normal weights (the MLPerf Tiny references' initializer), spatially smooth, and small
    random biases.

    Each k×k kernel is a random level shared by its taps plus a smaller independent part, with
    the He variance in total. Independent taps make every kernel a high-pass filter; stacked
    with BatchNorm they amplify any small perturbation by about 3 dB per layer (a deep random
    network is chaotic: 40 dB of input noise left 0 dB at MobileNetV1's output), so int8
    rounding would decide its outputs. Trained kernels are smooth, and so are these (the same
    test leaves 25 dB)."""
    import torch
    import torch.nn as nn

    for m in module.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            if isinstance(m, nn.Conv2d) and m.weight[0, 0].numel() > 1:
                w = m.weight
                level = torch.randn(w.shape[0], w.shape[1], 1, 1) * w.std()
                w.data = (1 - _SMOOTH_KERNEL_SHARE) ** 0.5 * w + _SMOOTH_KERNEL_SHARE ** 0.5 * level
            if m.bias is not None:
                nn.init.normal_(m.bias, std=0.05)


def _realistic_batchnorm(module, batches, generator) -> None:
    """Trained-looking BatchNorm layers: affine parameters drawn around (1, 0.1), so a ReLU after
    them keeps about half its inputs, and running statistics measured on task-shaped data, so
    every normalized activation has about unit variance, as in a trained network."""
    import torch
    import torch.nn as nn

    bns = [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    momenta = [bn.momentum for bn in bns]
    with torch.no_grad():
        for bn in bns:
            bn.weight.copy_(0.6 + 0.8 * torch.rand(bn.num_features, generator=generator))
            bn.bias.copy_(0.1 + 0.2 * torch.randn(bn.num_features, generator=generator))
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average over all batches
        module.eval()
        for bn in bns:
            bn.train()
        for x in batches:
            module(x)
        for bn, momentum in zip(bns, momenta):
            bn.momentum = momentum
    module.eval()


def _realistic_output(module, batches, output: str, streaming: bool = False) -> None:
    """Output statistics of a trained model, set through the last linear layer's weights and
    bias: class scores centred per class (every class wins on some inputs instead of one class
    on all, so top-1 agreement means something), or a reconstruction with the per-feature mean
    and spread of the input it reconstructs. A streaming model's last layer is a 1×1 Conv1d
    (per frame) and its statistics are over the frames."""
    import torch
    import torch.nn as nn

    last = [m for m in module.modules() if isinstance(m, nn.Conv1d if streaming else nn.Linear)][-1]
    with torch.no_grad():
        x = torch.cat(batches, dim=-1 if streaming else 0)
        y = module(x)[0].T if streaming else module(x)
        mean, std = y.mean(0), y.std(0)
        if output == "classes":
            last.bias.sub_(mean)
        else:
            gain = x.std(0) / std
            last.weight.mul_(gain[:, None])
            last.bias.copy_((last.bias - mean) * gain + x.mean(0))


def _load_checkpoint(module, path, name: str) -> None:
    import torch

    p = Path(path)
    if not p.is_file():
        raise InputError(f"checkpoint {path} does not exist")
    try:
        state = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for a file that is not a checkpoint
        # torch's own message suggests weights_only=False, i.e. running the file's code: not an option here
        raise InputError(f"cannot read checkpoint {path} ({type(e).__name__}): expected a state_dict written by "
                         f"torch.save(model.state_dict(), path)") from None
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise InputError(f"checkpoint {path} is not a state_dict (a dict of tensors saved with torch.save)")
    expected = module.state_dict()
    missing = [k for k in expected if k not in state]
    unexpected = [k for k in state if k not in expected]
    misshaped = [f"{k} {list(state[k].shape)} (model: {list(v.shape)})" for k, v in expected.items()
                 if k in state and state[k].shape != v.shape]
    problems = [f"{what}: {', '.join(keys[:3])}{' …' if len(keys) > 3 else ''}"
                for what, keys in (("missing", missing), ("unexpected", unexpected), ("wrong shape", misshaped)) if keys]
    if problems:
        raise InputError(f"checkpoint {path} does not fit zoo model {name}: {'; '.join(problems)}")
    module.load_state_dict(state)


def count_parameters_and_macs(module, inputs) -> tuple[int, int]:
    """Parameters after BatchNorm folding and MACs, MLPerf Tiny style, from one forward pass.

    A BatchNorm that consumes a convolution's or linear layer's output folds into it (the layer
    gains a bias if it had none); any other BatchNorm stays as a per-channel scale and shift.
    MACs: output elements × (input channels per group × kernel area) for convolutions, output
    elements × input features for linear layers."""
    import torch
    import torch.nn as nn

    layer_outputs: dict[int, nn.Module] = {}
    folded: set[nn.Module] = set()
    totals = {"parameters": 0, "macs": 0}

    def on_layer(m, args, out):
        layer_outputs[id(out)] = m
        totals["parameters"] += m.weight.numel() + (m.bias.numel() if m.bias is not None else 0)
        per_output = m.in_features if isinstance(m, nn.Linear) else m.weight[0].numel()
        totals["macs"] += out[0].numel() * per_output  # batch 1: out[0] is one sample

    def on_batchnorm(m, args, out):
        layer = layer_outputs.get(id(args[0]))
        if layer is not None and layer not in folded:
            folded.add(layer)
            totals["parameters"] += 0 if layer.bias is not None else m.num_features
        else:
            totals["parameters"] += 2 * m.num_features

    hooks = []
    for m in module.modules():
        if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Linear)):
            hooks.append(m.register_forward_hook(on_layer))
        elif isinstance(m, nn.modules.batchnorm._BatchNorm):
            hooks.append(m.register_forward_hook(on_batchnorm))
    try:
        with torch.no_grad():
            module(*inputs)
    finally:
        for h in hooks:
            h.remove()
    return totals["parameters"], totals["macs"]
