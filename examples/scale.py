#!/usr/bin/env python3
"""The seed example: y = 2*x + 1 for x: float64[batch, 2], batch declared in 2..4.

torch.export traces the module over the declared domain and infers its
contract (batch in 2..4); kiln.export takes that ExportedProgram, proves
its shape rules over the whole domain with kiln's own checker, runs the
eager module at the example and at the domain's corners (batch 2 and 4)
and seals those cases as evidence. The artifact is saved, loaded back and
run on ones of shape (3, 2); batch 5 is refused by the contract.

    examples/scale.py [OUT.kiln]

Needs torch 2 (`pip install torch==2.13.0`, then kiln: README, "Installing
with pip"). Without kiln installed it uses the build tree of scripts/example
(build/python).
"""
import os
import sys
import tempfile

import numpy

try:
    import torch
except ImportError:
    sys.exit("examples/scale.py needs PyTorch 2: pip install torch==2.13.0 (the CPU build; README, "
             "\"Installing with pip\")")

try:
    import kiln
except ImportError:  # not installed: the package scripts/example built
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "python"))
    import kiln


class Scale(torch.nn.Module):
    def forward(self, x):
        return 2 * x + 1


def main(path):
    batch = torch.export.Dim("batch", min=2, max=4)
    program = torch.export.export(Scale(), (torch.ones(3, 2, dtype=torch.float64),),
                                  dynamic_shapes={"x": {0: batch}}, strict=True)
    artifact = kiln.export(program, checks={"x": kiln.Check(range=(-1e6, 1e6), finite=True)})
    artifact.save(path)
    loaded = kiln.load(path)
    out = loaded.run(x=numpy.ones((3, 2)))
    print("shape", tuple(out["y"].shape))
    print("first row", out["y"][0].tolist())
    try:
        loaded.run(x=numpy.ones((5, 2)))
    except kiln.ContractError as refused:
        print(refused)
    else:
        sys.exit("batch 5 ran: the contract should have refused it")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory(prefix="kiln-scale-") as directory:
            main(os.path.join(directory, "scale.kiln"))
