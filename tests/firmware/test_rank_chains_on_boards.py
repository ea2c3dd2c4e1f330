"""A sample of the rank-1-6 differential test (tests/python/test_rank_differential.py) on the
emulated boards: random chains of reshape/permute/transpose/slice/select/unbind/split/cat and
element-wise ops, built for the smallest core (Armv6-M, 16 KiB of RAM: int8) and the MVE core
(int8 and fp32), every output bit-identical to the host runtime (data movement, add and mul
round the same on every core: no libm is involved)."""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import mcuflow  # noqa: E402
from mcuflow import device  # noqa: E402
from fwutil import requires_cross  # noqa: E402
from random_chains import Chains, input_shape_for  # noqa: E402

pytestmark = requires_cross

CHAINS = 12
SAMPLES = 2


def runs(shape, seed):
    """SAMPLES inputs: one batch along a size-1 leading dim, or one run each when there is none."""
    draws = [torch.randn(shape, generator=torch.Generator().manual_seed(seed + i)).numpy() for i in range(SAMPLES)]
    return [np.concatenate(draws)] if shape[0] == 1 else draws


@pytest.mark.parametrize("seed, target, board, precision", [
    (3, "cortex-m0", "qemu-m0", "int8"),
    (4, "cortex-m55", "qemu-m55", "int8"),
    (5, "cortex-m55", "qemu-m55", "fp32"),
])
def test_random_chains_on_board_bit_exact_with_host(seed, target, board, precision):
    model = Chains(seed, CHAINS, input_shape_for(seed)).eval()
    shape = model.input_shape
    example = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
    ep = torch.export.export(model, (example,))
    calibration = [(torch.randn(shape, generator=torch.Generator().manual_seed(s)),) for s in range(8)]
    program = mcuflow.compile(ep, target=target, precision=precision,
                              calibration=calibration if precision == "int8" else None)
    ranks = {len(o["shape"]) for o in program.outputs}
    assert len(ranks) >= 2, ranks  # the sample mixes ranks
    for xs in runs(shape, 100 + seed):
        on_board, on_host = device.run_on_board(program, xs, board), program.run(xs)
        assert len(on_board) == len(on_host) == CHAINS
        for b, h in zip(on_board, on_host):
            assert b.dtype == h.dtype and b.shape == h.shape
            np.testing.assert_array_equal(b, h)
