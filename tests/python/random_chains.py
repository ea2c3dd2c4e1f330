"""Random chains of view and data-movement ops over ranks 1-6 (reshape, permute, transpose,
slice, select, unbind, split, squeeze/unsqueeze, cat) with element-wise ops that mix values from
different positions, packed many to a module: one torch.export and one compile cover dozens of
graphs. Everything is drawn from a seeded numpy generator, so a failing chain is reproducible
from (seed, index) and printable with `describe`."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn

MAX_RANK = 6
MAX_NUMEL = 4096
MAX_PIECES = 6  # unbind into at most this many pieces (each is an op of the exported graph)
MIN_NUMEL = 4   # ops that shrink a tensor keep at least this many elements


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


def _random_shape(rng, numel: int, rank: int) -> list[int]:
    shape = [1] * rank
    for f in _prime_factors(numel):
        shape[int(rng.integers(rank))] *= f
    return shape


def _dims_of_size_at_least(shape, n):
    return [d for d, s in enumerate(shape) if s >= n]


def _propose(rng, shape: list[int], const_index: int):
    """One op spec valid for a tensor of `shape`, or None; specs are replayed by `apply`."""
    rank, numel = len(shape), int(np.prod(shape))
    kind = rng.choice(["reshape", "permute", "transpose", "slice", "select", "unbind", "split", "squeeze",
                       "unsqueeze", "cat_roll", "cat_pieces", "cat_scaled", "mul_const", "add_halves",
                       "unbind_mix"])
    big = _dims_of_size_at_least(shape, 2)
    # dims to slice, select or unbind: leaving at least MIN_NUMEL elements in each piece
    shrinkable = [d for d in big if numel // shape[d] >= MIN_NUMEL]
    few = [d for d in shrinkable if shape[d] <= MAX_PIECES]
    if kind == "reshape":
        return ("reshape", _random_shape(rng, numel, int(rng.integers(1, MAX_RANK + 1))))
    if kind == "permute" and rank >= 2:
        return ("permute", [int(v) for v in rng.permutation(rank)])
    if kind == "transpose" and rank >= 2:
        i, j = rng.choice(rank, 2, replace=False)
        return ("transpose", int(i) - rank * int(rng.integers(2)), int(j))  # negative dims too
    if kind == "slice" and shrinkable:
        d = int(rng.choice(shrinkable))
        start = int(rng.integers(0, shape[d] - 1))
        end = int(rng.integers(start + 1, shape[d] + 1))
        return ("slice", d, start, end, int(rng.integers(1, 4)))
    if kind == "select" and rank >= 2 and shrinkable:
        d = int(rng.choice(shrinkable))
        return ("select", d, int(rng.integers(-shape[d], shape[d])))
    if kind == "unbind" and rank >= 2 and few:
        d = int(rng.choice(few))
        return ("unbind", d, int(rng.integers(shape[d])))
    if kind == "split" and shrinkable:
        d = int(rng.choice(shrinkable))
        size = int(rng.integers(max(1, shape[d] // MAX_PIECES), shape[d]))
        return ("split", d, size, int(rng.integers(-(-shape[d] // size))))
    if kind == "squeeze" and rank >= 2 and 1 in shape:
        return ("squeeze", int(rng.choice([d for d, s in enumerate(shape) if s == 1])))
    if kind == "unsqueeze" and rank < MAX_RANK:
        return ("unsqueeze", int(rng.integers(0, rank + 1)))
    if kind == "cat_roll" and big:  # cat of two slices swapped: a roll along d
        d = int(rng.choice(big))
        return ("cat_roll", d, int(rng.integers(1, shape[d])))
    if kind == "cat_pieces" and rank >= 2 and few:  # unbind d, cat the pieces reversed along another dim
        d = int(rng.choice(few))
        return ("cat_pieces", d, int(rng.integers(0, rank - 1)))
    if kind == "cat_scaled" and 2 * numel <= MAX_NUMEL:
        return ("cat_scaled", int(rng.integers(rank)), float(rng.choice([-1.5, 0.5, 2.0])))
    if kind == "mul_const":  # a constant broadcast along a random subset of dims
        cshape = [s if rng.random() < 0.5 else 1 for s in shape]
        cshape = cshape[int(rng.integers(0, rank)):] if rng.random() < 0.3 else cshape  # fewer leading dims
        return ("mul_const", f"c{const_index}", cshape or [1])
    if kind == "add_halves" and shrinkable:  # first and second half of a dim, added: positions mix
        d = int(rng.choice(shrinkable))
        return ("add_halves", d, shape[d] // 2)
    if kind == "unbind_mix" and rank >= 2 and few:  # the attention pattern: q + 2k + 3v
        d = int(rng.choice(few))
        return ("unbind_mix", d)
    return None


MIXING = {"mul_const", "add_halves", "unbind_mix", "cat_scaled"}


def apply(spec, t: torch.Tensor, consts) -> torch.Tensor:
    kind, args = spec[0], spec[1:]
    if kind == "reshape":
        return t.reshape(args[0])
    if kind == "permute":
        return t.permute(*args[0])
    if kind == "transpose":
        return t.transpose(args[0], args[1])
    if kind == "slice":
        d, start, end, step = args
        return t[(slice(None),) * d + (slice(start, end, step),)]
    if kind == "select":
        return t.select(args[0], args[1])
    if kind == "unbind":
        return t.unbind(args[0])[args[1]]
    if kind == "split":
        d, size, pick = args
        return t.split(size, dim=d)[pick]
    if kind == "squeeze":
        return t.squeeze(args[0])
    if kind == "unsqueeze":
        return t.unsqueeze(args[0])
    if kind == "cat_roll":
        d, k = args
        return torch.cat([t.narrow(d, k, t.shape[d] - k), t.narrow(d, 0, k)], dim=d)
    if kind == "cat_pieces":
        d, c = args
        return torch.cat(t.unbind(d)[::-1], dim=c)
    if kind == "cat_scaled":
        d, scale = args
        return torch.cat([t, t * scale], dim=d)
    if kind == "mul_const":
        return t * consts[args[0]]
    if kind == "add_halves":
        d, h = args
        return t.narrow(d, 0, h) + t.narrow(d, h, h) * 0.5
    if kind == "unbind_mix":
        pieces = t.unbind(args[0])
        out = pieces[0]
        for i, p in enumerate(pieces[1:4], start=2):
            out = out + p * float(i)
        return out
    raise ValueError(kind)


def random_chain(rng, input_shape, const_index: int, length: int):
    """A list of specs from `input_shape` with at least one mixing op, and the constants it uses."""
    t = torch.zeros(input_shape)
    specs, consts = [], {}
    while len(specs) < length or not any(s[0] in MIXING for s in specs):
        spec = _propose(rng, list(t.shape), const_index + len(consts))
        if spec is None:
            continue
        if spec[0] == "mul_const":
            consts[spec[1]] = torch.from_numpy(rng.uniform(-2, 2, size=spec[2]).astype(np.float32))
        t = apply(spec, t, consts)
        specs.append(spec)
        if len(specs) > 3 * length:  # a tensor too small for mixing ops: start over
            return random_chain(rng, input_shape, const_index, length)
    return specs, consts


class Chains(nn.Module):
    """`count` independent random chains of one input, each a model output."""

    def __init__(self, seed: int, count: int, input_shape):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.input_shape = list(input_shape)
        self.chains = []
        n_consts = 0
        for _ in range(count):
            specs, consts = random_chain(rng, self.input_shape, n_consts, int(rng.integers(3, 8)))
            for name, value in consts.items():
                self.register_buffer(name, value)
            n_consts += len(consts)
            self.chains.append(specs)

    def consts(self):
        return dict(self.named_buffers())

    def forward(self, x):
        consts = self.consts()
        outs = []
        for specs in self.chains:
            t = x
            for spec in specs:
                t = apply(spec, t, consts)
            outs.append(t)
        return tuple(outs)

    def describe(self, i: int) -> str:
        return " -> ".join(f"{s[0]}{list(s[1:])}" for s in self.chains[i])


def input_shape_for(seed: int) -> list[int]:
    """A 720-element input (2^4 * 3^2 * 5: rank-6 shapes without size-1 dims exist) of rank 1-6."""
    rng = np.random.default_rng(seed + 1_000_003)
    return _random_shape(rng, 720, int(rng.integers(1, MAX_RANK + 1)))
